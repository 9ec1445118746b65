import { resolveMirrorConfig } from '../config/index.js';
import { checkDeprecationLink } from '../mirror/deprecations.js';
import { isValidName } from '../protocol/paths.js';
import { validVersion } from '../version-order.js';
import { printJson, usageError } from './args.js';
import { provenanceSigningKey } from './key-flags.js';
import { mirrorFlag, openMirror } from './mirror-flag.js';
import type { DeprecateFlags } from './options/deprecate.js';

export async function runDeprecate(values: DeprecateFlags, positionals: string[]): Promise<number> {
  const [address = '', version = ''] = positionals;
  const parts = address.split('/');
  if (parts.length !== 3 || !parts.every(isValidName)) throw usageError('deprecate', `"${address}" is not a module address: give NAMESPACE/NAME/PROVIDER.`);
  if (validVersion(version) === null) throw usageError('deprecate', `"${version}" is not a version: give it as the mirror lists it, such as 1.2.0.`);
  const undo = values.undo === true;
  const reason = values.reason;
  const link = values.link;
  if (undo && (reason !== undefined || link !== undefined)) throw usageError('deprecate', '--undo takes no --reason or --link.');
  if (!undo && (reason === undefined || reason.trim() === ''))
    throw usageError('deprecate', 'Say why with --reason TEXT (or pass --undo to lift a deprecation).');
  const linkProblem = link === undefined ? undefined : checkDeprecationLink(link);
  if (linkProblem) throw usageError('deprecate', `--link ${linkProblem}, got "${link}".`);
  const [namespace, name, provider] = parts as [string, string, string];
  const deprecation = undo ? null : { reason: reason!, link: link ?? null };
  const { store, config } = await openMirror(values, 'deprecate', mirrorFlag(values, 'deprecate', 'out'), (out) =>
    resolveMirrorConfig({ out, config: values.config }),
  );
  let result;
  try {
    // A signed mirror's change is signed with the key publish takes: --sign-key, else the config's provenance: key.
    const signer = await provenanceSigningKey(values, 'deprecate', config);
    result = await store.deprecate({ namespace, name, provider }, version, deprecation, signer);
  } finally {
    store.close();
  }
  if (values.json === true) {
    printJson({ mirror: store.location, module: result.module, version: result.version, deprecation: result.deprecation, changed: result.changed });
    return 0;
  }
  const what = undo ? 'no longer deprecated' : `deprecated: ${reason}`;
  console.log(`${result.module} ${result.version} ${what}${result.changed ? '' : ' (already so; nothing changed)'} in ${store.shown}`);
  return 0;
}
