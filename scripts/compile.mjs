// Compiles src/ into lib/ (tsc) and bundles the CLI into lib/cli-bundle/
// (rolldown), each only when its inputs are newer than its output, and
// prints nothing when all went well: `npm start` then serves within seconds
// of the last build, and tsc's errors are all a failure shows.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = (...parts) => join(root, ...parts);

/** The newest modification time of the files (or the files under the folders) named. */
function newest(paths) {
  let time = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (!stat.isDirectory()) time = Math.max(time, stat.mtimeMs);
    else for (const entry of readdirSync(path, { recursive: true })) time = Math.max(time, statSync(join(path, entry)).mtimeMs);
  }
  return time;
}

const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0);
const COMPILED = at('lib', '.compiled');
const BUNDLE = at('lib', 'cli-bundle', 'cli.js');

if (newest([at('src'), at('tsconfig.json'), at('tsconfig.build.json'), at('package.json')]) >= mtime(COMPILED)) {
  execFileSync(process.execPath, [at('node_modules', 'typescript', 'bin', 'tsc'), '-p', at('tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  writeFileSync(COMPILED, '');
}
if (mtime(COMPILED) >= mtime(BUNDLE) || newest([at('rolldown.config.mjs')]) >= mtime(BUNDLE)) {
  // Through its API, which reports nothing on success (the CLI prints a table of every chunk).
  const { build } = await import('rolldown');
  const { default: config } = await import(at('rolldown.config.mjs'));
  await build({ ...config, logLevel: 'warn' });
}
