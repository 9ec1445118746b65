// A mirror in a folder: each write stages its change beside the mirror and
// renames it into place under the mirror's lock (mirror/transaction.ts), and
// a reader first puts back what a writer that died mid-swap set aside.

import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { hasLeftChanges, homeOf, putBackSetAside, requireMirrorAt } from '../mirror/home.js';
import { readManifest } from '../mirror/manifest.js';
import { withMirrorRead } from '../mirror/transaction.js';
import { signingKeyWarnings } from '../providers/verify.js';
import { setDeprecation } from '../publish/deprecate.js';
import { publish } from '../publish/module.js';
import { refreshModules } from '../publish/refresh.js';
import { completenessProblems } from '../verify/complete.js';
import { verifyMirror } from '../verify/index.js';
import { verifyTruthSignatures } from '../verify/signed.js';
import type { MirrorStore, StoreOptions } from './index.js';

export function openFolderStore(outDir: string, options: StoreOptions): MirrorStore {
  const location = resolve(outDir);
  return {
    shown: `${relative(process.cwd(), location) || '.'}/`,
    location,
    publish: (source, publishOptions) => publish(source, { ...publishOptions, outDir: location }),
    async publishProvider(publishOptions) {
      // Loaded only for a provider release: a module publish is the path release pipelines run most.
      const { publishProviderRelease } = await import('../publish/provider.js');
      return publishProviderRelease({ ...publishOptions, outDir: location });
    },
    async deprecate(address, version, deprecation, signer) {
      await requireMirrorAt(location, options.command);
      return setDeprecation(location, address, version, deprecation, signer ? { signer } : {});
    },
    async verify({ repair = false, complete, trusted } = {}) {
      const dir = homeOf(location);
      // A reader's half of always finding a mirror: a mirror set aside by a writer that died mid-swap is put back
      // first, and a change a writer died applying is finished (under the lock, as the next writer would).
      await putBackSetAside(dir);
      // A folder that is there is judged (no manifest is a problem found); a path that is not, is a usage error.
      if (!existsSync(dir)) await requireMirrorAt(dir, options.command);
      if (hasLeftChanges(dir)) await withMirrorRead(dir, async () => {});
      const repaired = repair ? (await refreshModules('all', { outDir: dir, imageHosts: options.imageHosts })).changed : undefined;
      // The truth's signatures first: the archives are checked against the states they vouch for.
      const problems = [...(trusted ? await verifyTruthSignatures(dir, trusted) : []), ...(await verifyMirror(dir))];
      const checked = complete && problems.length === 0 ? readManifest(dir) : undefined;
      if (checked) problems.push(...(await completenessProblems(dir, checked, complete!.platforms)));
      // The root alone: the provider keys are in it, and a large mirror's states would all be read again.
      const current = problems.length === 0 ? readManifest(dir, []) : undefined;
      const warnings = current ? await signingKeyWarnings(dir, current) : [];
      return { problems, ...(repaired ? { repaired } : {}), ...(warnings.length > 0 ? { warnings } : {}) };
    },
    async unbundle(file, unbundleOptions = {}) {
      const { unbundle } = await import('../bundle/unbundle.js');
      const { outDir: _outDir, ...counts } = await unbundle({ file, outDir: location, ...unbundleOptions });
      return counts;
    },
    close() {},
  };
}
