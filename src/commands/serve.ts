import { relative, resolve } from 'node:path';
import { baseUrlFlag, resolveMirrorConfig } from '../config.js';
import { MirrorError } from '../errors.js';
import { startServer } from '../serve/index.js';
import { stringFlag, type Values } from './args.js';

export async function runServe(values: Values): Promise<number> {
  const port = Number(values['port'] ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MirrorError('USAGE', `Invalid --port "${values['port']}": expected an integer from 0 to 65535.`);
  }
  const cert = values['tls-cert'] as string | undefined;
  const key = values['tls-key'] as string | undefined;
  if ((cert === undefined) !== (key === undefined)) {
    throw new MirrorError('USAGE', 'HTTPS needs both --tls-cert and --tls-key.', { hint: 'Pass both files, or neither for plain HTTP.' });
  }
  const baseUrl = baseUrlFlag(stringFlag(values, 'base-url'), 'serve');
  const quiet = values['quiet'] === true;
  // The mirror the config's `out` names, as build and publish write it, unless --dir says otherwise.
  const { outDir: dir } = resolveMirrorConfig({ out: stringFlag(values, 'dir') });
  const server = await startServer({
    dir,
    host: String(values['host'] ?? '127.0.0.1'),
    port,
    dataDir: resolve(String(values['data'] ?? 'data')),
    tls: cert !== undefined && key !== undefined ? { cert, key } : undefined,
    baseUrl: baseUrl === '' ? undefined : baseUrl,
    log: quiet ? undefined : (line) => console.log(line),
  });
  console.log(`modmirror serving ${relative(process.cwd(), dir) || '.'} at ${server.url}`);
  await new Promise<void>((done) => {
    const stop = (signal: string) => {
      if (!quiet) console.log(`${signal}: finishing open requests, then stopping`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void server.close().then(done);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return 0;
}
