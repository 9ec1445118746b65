import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { signatureFileOf } from '../bundle/signature.js';
import { resolveMirrorConfig } from '../config/index.js';
import { printJson } from './args.js';
import { trustedKeys } from './key-flags.js';
import { mirrorFlag, openMirror } from './mirror-flag.js';
import type { UnbundleFlags } from './options/unbundle.js';

export async function runUnbundle(values: UnbundleFlags, positionals: string[] = []): Promise<number> {
  const file = positionals[0]!;
  const { store, config } = await openMirror(values, 'unbundle', mirrorFlag(values, 'unbundle', 'out'), (out) =>
    resolveMirrorConfig({ out, config: values.config }),
  );
  let result;
  try {
    // Every trusted key is read before the bundle is: a key file that is not one stops the command first.
    const trust = await trustedKeys(values, config);
    result = await store.unbundle(file, trust ? { trust } : {});
  } finally {
    store.close();
  }
  // A signature nobody asked to check is named, so its presence is not mistaken for a check.
  const asc = signatureFileOf(resolve(file));
  const signature = result.signedBy ? { checked: true, ...result.signedBy } : existsSync(asc) ? { checked: false, file: asc } : undefined;
  if (values.json === true) {
    const { signedBy: _signedBy, ...counts } = result;
    printJson({ mirror: store.location, ...counts, ...(signature ? { signature } : {}) });
    return 0;
  }
  const replaced = result.replaced > 0 ? `, ${result.replaced} replaced (recorded as forced)` : '';
  const providers = result.addedProviderPackages > 0 ? `, ${result.addedProviderPackages} new provider package(s)` : '';
  console.log(
    `Unbundled ${result.files} files into ${store.shown}: ${result.added} new version(s)${providers}${replaced}; the mirror has ${result.versions} versions of ${result.modules} modules.`,
  );
  if (result.signedBy)
    console.log(`Signed by key ${result.signedBy.keyId}${result.signedBy.userId ? ` (${result.signedBy.userId})` : ''}, a trusted key: checked.`);
  else if (signature)
    console.error(
      `note: ${relative(process.cwd(), asc) || asc} was not checked: unbundle --trust KEY.asc (or trust: in the config) requires the bundle to be signed by that key.`,
    );
  return 0;
}
