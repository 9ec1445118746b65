// A worker thread that renders READMEs for a build, so markdown, hashing and
// compression run beside the build's own thread instead of on it.

import { parentPort, workerData } from 'node:worker_threads';
import { createReadmeRenderer, storedRendering, type ReadmeOptions } from './markdown.js';

const render = await createReadmeRenderer(workerData as ReadmeOptions);
parentPort!.on('message', ({ id, markdown }: { id: number; markdown: string }) => {
  try {
    parentPort!.postMessage({ id, ...storedRendering(render(markdown)) });
  } catch (error) {
    parentPort!.postMessage({ id, error: (error as Error).message });
  }
});
