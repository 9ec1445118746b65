import { relative } from 'node:path';
import { unbundle } from '../bundle/unbundle.js';
import { resolveMirrorConfig } from '../config/index.js';
import { printJson, type Values } from './args.js';
import { mirrorFlag } from './mirror-flag.js';

export async function runUnbundle(values: Values, positionals: string[] = []): Promise<number> {
  const file = positionals[0]!;
  const result = await unbundle({ file, outDir: resolveMirrorConfig({ out: mirrorFlag(values, 'unbundle', 'out') }).outDir });
  if (values['json'] === true) {
    const { outDir, ...counts } = result;
    printJson({ mirror: outDir, ...counts });
    return 0;
  }
  const out = relative(process.cwd(), result.outDir) || '.';
  const replaced = result.replaced > 0 ? `, ${result.replaced} replaced (recorded as forced)` : '';
  const providers = result.addedProviderPackages > 0 ? `, ${result.addedProviderPackages} new provider package(s)` : '';
  console.log(
    `Unbundled ${result.files} files into ${out}/: ${result.added} new version(s)${providers}${replaced}; the mirror has ${result.versions} versions of ${result.modules} modules.`,
  );
  return 0;
}
