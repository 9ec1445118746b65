// Removing published module versions on purpose (the management API's
// DeleteVersion, DeleteProvider and DeleteByName): the mirror's one write,
// allowed to remove, with each removed version on record in the manifest's
// ledger (what, its bytes, when, by whom), so a removal is never silent and a
// version removed can only come back with the bytes it had. The module's
// documents are rewritten without it, its files go, and a module left with
// no version goes whole, as do the listings that only it was on.

import { join } from 'node:path';
import { emitModule } from '../emit/index.js';
import { writeMirrorIndexes } from '../emit/indexes.js';
import { MirrorError } from '../errors.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { ledgerOf, moduleRemoval } from '../mirror/ledger.js';
import { carriedProviders, moduleStateFile, moduleStatesIn, readModuleStateFile, type ModuleRecord } from '../mirror/manifest.js';
import { readModuleVersions } from '../mirror/read.js';
import { addressKey, moduleDir, MODULES_BASE, parseAddressKey, V2_MODULES_BASE } from '../protocol/paths.js';
import { GENERATOR } from '../version.js';
import { withPartialWrite } from './write.js';

export interface RemoveOptions {
  outDir: string;
  /** As the config's browse.imageHosts, so the rewritten browse page matches a build's. */
  imageHosts: string[];
  /** Who asked, for the record: `user:alice`, `team:acme/platform`. */
  by: string;
  /** Signs the truth the removal changes (a signed mirror's writes must). */
  signer?: PrivateSigningKey;
}

export interface RemoveTarget {
  namespace: string;
  name: string;
  /** One provider's module; every provider of namespace/name when absent. */
  provider?: string;
  /** One version; every version when absent. */
  version?: string;
}

export interface RemoveResult {
  /** `ns/name/provider@version`, each now in the ledger's `removed`. */
  removed: string[];
}

/** Removes what `target` names from the mirror, on record; NOT_FOUND when the mirror holds none of it. */
export function removeModuleVersions(target: RemoveTarget, options: RemoveOptions): Promise<RemoveResult> {
  const rewritten: string[] = [];
  const write = {
    outDir: options.outDir,
    what: 'the removal',
    allow: { remove: true },
    check: () => ({ modules: rewritten }),
    modules: (dir: string) => moduleStatesIn(dir, target.namespace).filter((k) => k.startsWith(`${target.namespace}/${target.name}/`)),
    ...(options.signer ? { signer: options.signer } : {}),
  };
  return withPartialWrite(write, async (tx, mirror) => {
    const { manifest } = mirror;
    const { namespace, name } = target;
    const keys = Object.keys(manifest.modules).filter((k) =>
      target.provider === undefined ? k.startsWith(`${namespace}/${name}/`) : k === `${namespace}/${name}/${target.provider}`,
    );
    const at = new Date().toISOString();
    const ledger = ledgerOf(manifest);
    const gone = new Map<string, string[]>();
    for (const key of keys) {
      const versions = manifest.modules[key]!.versions.filter((v) => target.version === undefined || v.version === target.version);
      for (const v of versions) ledger.removed.push(moduleRemoval(key, v.version, v.sha256, at, options.by));
      if (versions.length > 0)
        gone.set(
          key,
          versions.map((v) => v.version),
        );
    }
    if (gone.size === 0) {
      const what = `${namespace}/${name}${target.provider ? `/${target.provider}` : ''}${target.version ? ` ${target.version}` : ''}`;
      throw new MirrorError('NOT_FOUND', `The mirror holds no ${what}.`);
    }
    const remaining = (key: string) => manifest.modules[key]!.versions.length - (gone.get(key)?.length ?? 0);
    const siblings = mirror.providersOf(namespace, name);
    const providersLeft = siblings.filter((p) => remaining(`${namespace}/${name}/${p}`) > 0);
    await tx.stage(async (staging) => {
      const baseUrl = mirror.baseUrl ?? '';
      const { deprecations } = mirror;
      const records = new Map(mirror.records().map((r) => [addressKey(r.address), r] as [string, ModuleRecord]));
      // Every module of the name whose details list its providers or versions is written again.
      const changedProviders = providersLeft.length !== siblings.length;
      for (const provider of siblings) {
        const address = { namespace, name, provider };
        const key = addressKey(address);
        const removed = gone.get(key) ?? [];
        if (remaining(key) === 0) {
          await staging.remove(moduleDir(address));
          await staging.remove(`${V2_MODULES_BASE}${key}/`);
          records.delete(key);
          continue;
        }
        // The version's folder: its detail, download document and archive.
        for (const version of removed) await staging.remove(`${moduleDir(address)}${version}/`);
        if (removed.length === 0 && !changedProviders) continue;
        const versions = (await readModuleVersions(mirror.dir, manifest, address)).filter((v) => !removed.includes(v.source.version));
        const record = await emitModule(staging, versions, providersLeft, { baseUrl, deprecations: deprecations[key] });
        if (record) records.set(key, record);
        rewritten.push(key);
      }
      // Folders a build would not have made: a name with no provider left, a namespace with no module.
      if (providersLeft.length === 0) for (const base of [MODULES_BASE, V2_MODULES_BASE]) await staging.remove(`${base}${namespace}/${name}/`);
      if (![...records.keys()].some((k) => parseAddressKey(k).namespace === namespace) && !othersListedIn(mirror.dir, namespace, name))
        for (const base of [MODULES_BASE, V2_MODULES_BASE]) await staging.remove(`${base}${namespace}/`);
      const providers = carriedProviders(manifest);
      await writeMirrorIndexes(staging, [...records.values()], {
        baseUrl,
        imageHosts: options.imageHosts,
        generator: GENERATOR,
        ledger,
        deprecations,
        only: [{ namespace, name }],
        providers,
        ...(mirror.live ? { live: mirror.live } : {}),
      });
    });
    return { removed: [...gone].flatMap(([key, versions]) => versions.map((v) => `${key}@${v}`)) };
  });
}

/**
 * Whether a module of `namespace` other than those of `name` has versions: the write read only the
 * states of `name`, and the namespace's folders stay while another module is in them. Stops at the first.
 */
function othersListedIn(dir: string, namespace: string, name: string): boolean {
  return moduleStatesIn(dir, namespace).some(
    (key) => !key.startsWith(`${namespace}/${name}/`) && (readModuleStateFile(join(dir, moduleStateFile(key)), key)?.versions.length ?? 0) > 0,
  );
}
