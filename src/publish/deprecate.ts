// `modmirror deprecate` and the management API's deprecation call: marks one
// published version deprecated (or not) in the mirror, rewriting its module's
// state, its documents and the listings that show it, through the partial
// write publish uses. Nothing else of the mirror changes.

import type { Deprecation } from '../mirror/deprecations.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { readModuleVersions } from '../mirror/read.js';
import { recordsView, stagedView } from '../mirror/view.js';
import { emitIndexes, emitModule } from '../emit/index.js';
import { MirrorError } from '../errors.js';
import { ledgerOf } from '../mirror/ledger.js';
import { carriedProviders, recentVersions, sortRecords } from '../mirror/manifest.js';
import { addressKey } from '../protocol/paths.js';
import { withPartialWrite } from './write.js';
import type { ModuleAddress } from '../types.js';
import { GENERATOR } from '../version.js';

export interface DeprecateResult {
  module: string;
  version: string;
  deprecation: Deprecation | null;
  /** False when the version already had exactly this deprecation (or none, when undone): nothing was written. */
  changed: boolean;
}

/** Sets (or, with null, removes) the deprecation of `version`; 404-coded MirrorError when the mirror lacks it. */
export function setDeprecation(
  outDir: string,
  address: ModuleAddress,
  version: string,
  deprecation: Deprecation | null,
  options: { hashArchives?: boolean; signer?: PrivateSigningKey } = {},
): Promise<DeprecateResult> {
  const key = addressKey(address);
  // A mirror that is not there has no such module: not found, as for any other name (newMirror lets it get that far).
  // hashArchives false: the archives are stand-ins of their size (a bucket's mirror fetched for this write).
  const write = {
    outDir,
    what: 'the deprecation',
    newMirror: true,
    check: () => ({ modules: [key], hashArchives: options.hashArchives !== false }),
    modules: () => [key],
    ...(options.signer ? { signer: options.signer } : {}),
  };
  return withPartialWrite(write, async (tx, mirror) => {
    const { manifest } = mirror;
    const entry = manifest.modules[key];
    if (!mirror.exists || !entry)
      throw new MirrorError('NOT_FOUND', `Module ${key} not found in the mirror`, { hint: 'Name a module the mirror holds, as NAMESPACE/NAME/PROVIDER.' });
    if (!entry.versions.some((v) => v.version === version)) {
      throw new MirrorError('NOT_FOUND', `Version ${version} of ${key} not found`, {
        hint: `The mirror holds ${entry.versions.map((v) => v.version).join(', ')}.`,
      });
    }
    const { deprecations } = mirror;
    const current = deprecations[key]?.[version] ?? null;
    if (JSON.stringify(current) === JSON.stringify(deprecation)) return { module: key, version, deprecation, changed: false };
    const forModule = { ...deprecations[key] };
    if (deprecation) forModule[version] = deprecation;
    else delete forModule[version];
    deprecations[key] = forModule;
    await tx.stage(async (staging) => {
      const baseUrl = mirror.baseUrl ?? '';
      const providers = mirror.providersOf(address.namespace, address.name);
      await emitModule(staging, await readModuleVersions(mirror.dir, manifest, address), providers, { baseUrl, deprecations: forModule });
      // The indexes are rewritten too: the manifest's new stamp is what tells a running server the mirror changed.
      const records = sortRecords(mirror.records());
      await emitIndexes(staging, records, {
        view: mirror.live ? stagedView(staging, mirror.live.dir, records) : recordsView(records),
        recent: mirror.live ? (manifest.recent ?? []) : recentVersions(records),
        baseUrl,
        generator: GENERATOR,
        ledger: ledgerOf(manifest),
        deprecations,
        only: [{ namespace: address.namespace, name: address.name }],
        // The manifest is rewritten whole: it keeps listing the providers (and discovery their providers.v1).
        providers: carriedProviders(manifest),
      });
    });
    return { module: key, version, deprecation, changed: true };
  });
}
