import { relative } from 'node:path';
import { createBundle } from '../bundle/create.js';
import type { Values } from '../cli.js';
import { MirrorError } from '../errors.js';

export async function runBundle(values: Values, positionals: string[] = []): Promise<number> {
  if (positionals.length > 0) throw new MirrorError('USAGE', `Unexpected argument "${positionals[0]}".`, { hint: 'Run modmirror bundle --help.' });
  const out = values['out'] as string | undefined;
  if (out === undefined) throw new MirrorError('USAGE', 'Name the bundle to write with --out FILE.tar.gz.', { hint: 'Run modmirror bundle --help.' });
  const result = await createBundle({ dir: (values['dir'] as string | undefined) ?? 'dist', out, since: values['since'] as string | undefined });
  const what = result.skipped > 0 ? `${result.versions} new or changed version(s); ${result.skipped} left out that the base has` : `${result.versions} version(s)`;
  console.log(`Wrote ${relative(process.cwd(), result.out) || result.out}: ${result.files} files, ${what}, ${formatBytes(result.bytes)}.`);
  // Printed so the copy on the other side can be checked before unbundling.
  console.log(`sha256 ${result.sha256}`);
  return 0;
}

function formatBytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
