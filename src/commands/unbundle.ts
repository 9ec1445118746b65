import { resolveMirrorConfig } from '../config/index.js';
import { printJson, type Values } from './args.js';
import { mirrorFlag, openMirror } from './mirror-flag.js';

export async function runUnbundle(values: Values, positionals: string[] = []): Promise<number> {
  const file = positionals[0]!;
  const { store } = await openMirror(values, 'unbundle', mirrorFlag(values, 'unbundle', 'out'), (out) => resolveMirrorConfig({ out }));
  let result;
  try {
    result = await store.unbundle(file);
  } finally {
    store.close();
  }
  if (values['json'] === true) {
    printJson({ mirror: store.location, ...result });
    return 0;
  }
  const replaced = result.replaced > 0 ? `, ${result.replaced} replaced (recorded as forced)` : '';
  const providers = result.addedProviderPackages > 0 ? `, ${result.addedProviderPackages} new provider package(s)` : '';
  console.log(
    `Unbundled ${result.files} files into ${store.shown}: ${result.added} new version(s)${providers}${replaced}; the mirror has ${result.versions} versions of ${result.modules} modules.`,
  );
  return 0;
}
