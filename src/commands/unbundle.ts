import { relative } from 'node:path';
import { unbundle } from '../bundle/unbundle.js';
import type { Values } from '../cli.js';
import { MirrorError } from '../errors.js';

export async function runUnbundle(values: Values, positionals: string[] = []): Promise<number> {
  const [file, extra] = positionals;
  if (file === undefined) throw new MirrorError('USAGE', 'Name the bundle: modmirror unbundle FILE.tar.gz [--out DIR].', { hint: 'Run modmirror unbundle --help.' });
  if (extra !== undefined) throw new MirrorError('USAGE', `Unexpected argument "${extra}".`, { hint: 'Run modmirror unbundle --help.' });
  const result = await unbundle({ file, outDir: (values['out'] as string | undefined) ?? 'dist' });
  const out = relative(process.cwd(), result.outDir) || '.';
  const replaced = result.replaced > 0 ? `, ${result.replaced} replaced (recorded as forced)` : '';
  console.log(`Unbundled ${result.files} files into ${out}/: ${result.added} new version(s)${replaced}; the mirror has ${result.versions} versions of ${result.modules} modules.`);
  return 0;
}
