import { resolve } from 'node:path';
import type { Values } from '../cli.js';
import { MirrorError } from '../errors.js';
import { startServer } from '../serve/index.js';

export async function runServe(values: Values, positionals: string[] = []): Promise<number> {
  if (positionals.length > 0) throw new MirrorError('USAGE', `Unexpected argument "${positionals[0]}".`, { hint: 'Run modmirror serve --help.' });
  const port = Number(values['port'] ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MirrorError('USAGE', `Invalid --port "${values['port']}": expected an integer from 0 to 65535.`);
  }
  const cert = values['tls-cert'] as string | undefined;
  const key = values['tls-key'] as string | undefined;
  if ((cert === undefined) !== (key === undefined)) {
    throw new MirrorError('USAGE', 'HTTPS needs both --tls-cert and --tls-key.', { hint: 'Pass both files, or neither for plain HTTP.' });
  }
  const baseUrl = values['base-url'] as string | undefined;
  if (baseUrl !== undefined && !/^https?:\/\/[^/]+/.test(baseUrl)) {
    throw new MirrorError('USAGE', `Invalid --base-url "${baseUrl}": expected an absolute http(s) URL.`);
  }
  const quiet = values['quiet'] === true;
  const server = await startServer({
    dir: resolve(String(values['dir'] ?? 'dist')),
    host: String(values['host'] ?? '127.0.0.1'),
    port,
    dataDir: resolve(String(values['data'] ?? 'data')),
    tls: cert !== undefined && key !== undefined ? { cert, key } : undefined,
    baseUrl: baseUrl === undefined || baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`,
    log: quiet ? undefined : (line) => console.log(line),
  });
  console.log(`modmirror serving ${values['dir'] ?? 'dist'} at ${server.url}`);
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
