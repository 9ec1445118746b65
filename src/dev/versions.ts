// A save usually touches one version folder of a folder source: dev then
// rewrites that version alone, as `publish --force` would (its module's
// documents, the listings that show it, the manifest), rather than run the
// whole build, whose cost grows with every version of every source. Any other
// change (the config, a git source's tags, a folder above the versions)
// goes through the full incremental build.

import { statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { moduleMeta, type ResolvedConfig } from '../config/index.js';
import { MirrorError } from '../errors.js';
import { publish } from '../publish/module.js';
import { removeModuleVersions } from '../publish/remove.js';
import { isValidName } from '../protocol/paths.js';
import { describeFolder } from '../scan/folder.js';
import type { ModuleAddress } from '../types.js';
import { validVersion } from '../version-order.js';
import type { DevError } from './events.js';

/** One version folder of a folder source. */
export interface ChangedVersion {
  address: ModuleAddress;
  version: string;
  /** The folder's name (the version as written), and the folder. */
  folder: string;
  dir: string;
}

/**
 * The version folders `paths` fall in, or undefined when one of them is not
 * in a version folder of a folder source (then the whole build runs).
 */
export function changedVersions(config: ResolvedConfig, paths: string[]): ChangedVersion[] | undefined {
  const found = new Map<string, ChangedVersion>();
  const folders = config.sources.filter((s) => s.kind === 'folder');
  for (const path of paths) {
    const source = folders.find((s) => path.startsWith(s.dir + sep));
    if (!source) return undefined;
    const [namespace = '', name = '', provider = '', folder = ''] = relative(source.dir, path).split(sep);
    const version = validVersion(folder);
    // The scan leaves out hidden folders and names that are no address: the build says why.
    if (![namespace, name, provider].every(isValidName) || version === null || folder.startsWith('.')) return undefined;
    const dir = join(source.dir, namespace, name, provider, folder);
    found.set(dir, { address: { namespace, name, provider }, version, folder, dir });
  }
  return [...found.values()];
}

/** What rewriting the changed versions did: a line for the terminal, and each version's error (none when it built). */
export interface VersionsRebuilt {
  summary: string;
  /** The versions rewritten (`ns/name/provider@version`), whose earlier errors no longer stand. */
  done: string[];
  errors: DevError[];
}

/** Publishes each changed version into the preview (replacing the one built before), or removes it when its folder is gone. */
export async function rebuildVersions(config: ResolvedConfig, versions: ChangedVersion[]): Promise<VersionsRebuilt> {
  const errors: DevError[] = [];
  const done: string[] = [];
  let published = 0;
  let removed = 0;
  for (const v of versions) {
    const key = `${v.address.namespace}/${v.address.name}/${v.address.provider}`;
    done.push(`${key}@${v.version}`);
    try {
      if (!isDirectory(v.dir)) {
        await removeModuleVersions({ ...v.address, version: v.version }, { outDir: config.outDir, imageHosts: config.imageHosts, by: 'modmirror dev' }).catch(
          (error: unknown) => {
            // Never built (it failed, or it was made and removed between two looks): nothing to remove.
            if (!(error instanceof MirrorError && error.code === 'NOT_FOUND')) throw error;
          },
        );
        removed++;
        continue;
      }
      const { publishedAt, fingerprint } = await describeFolder(v.dir);
      const source = {
        address: v.address,
        meta: moduleMeta(config, v.address),
        version: v.version,
        tag: v.folder,
        publishedAt,
        origin: { kind: 'folder' as const, dir: v.dir },
        label: v.dir,
        fingerprint,
      };
      const result = await publish(source, {
        outDir: config.outDir,
        cacheDir: config.cacheDir,
        baseUrl: config.baseUrl,
        imageHosts: config.imageHosts,
        limits: config.limits,
        force: true,
      });
      if (result.outcome !== 'unchanged') published++;
    } catch (error) {
      if (!(error instanceof MirrorError)) throw error;
      const syntax = error.code === 'HCL_SYNTAX';
      errors.push({ module: key, version: v.version, where: v.dir, lines: syntax ? error.message.split('\n') : [error.message], syntax });
    }
  }
  const parts = [
    `${published} of ${versions.length} ${versions.length === 1 ? 'version' : 'versions'} rewritten`,
    ...(removed > 0 ? [`${removed} removed`] : []),
  ];
  return { summary: parts.join(', '), done, errors };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
