// What the management API's registry-module routes need from the server
// (management/registry.ts, RegistryHooks): the served mirror's modules, the
// signed upload URLs, and the writes (an upload published, versions
// removed, a deprecation), each through src/publish/ like the CLI's. The
// writes of this process queue up here, one at a time, rather than poll the
// mirror's lock against each other; another process (a CLI publish) still
// takes its turn on the lock. A publish is async throughout, so the server
// keeps answering while one runs.

import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { MirrorError } from '../errors.js';
import type { RegistryHooks } from '../management/registry.js';
import type { Deprecation } from '../mirror/deprecations.js';
import { setDeprecation } from '../publish/deprecate.js';
import { publish } from '../publish/module.js';
import { removeModuleVersions } from '../publish/remove.js';
import { unpackUpload, uploadedVersion, type UploadLimits } from '../publish/upload.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import type { ModuleAddress, ModuleMeta, SizeLimits, VersionSource } from '../types.js';
import type { Mirror } from './mirror.js';
import type { ArchiveSigner } from './signing.js';

export interface PublishingOptions {
  /** The build cache publish uses (the config's cacheDir). */
  cacheDir: string;
  /** As the config's browse.imageHosts. */
  imageHosts: string[];
  /** A module's owner, description and source, as the config gives them. */
  moduleMeta: (address: ModuleAddress) => ModuleMeta;
  limits: UploadLimits;
  /** Refuse every write (serve --read-only). */
  readOnly: boolean;
  /** How long an upload URL stays valid. */
  uploadUrlTtlSeconds: number;
  /** The server's absolute URL, when configured; else the request's Host. */
  baseUrl: string | undefined;
  tls: boolean;
  /** The config's `limits`, for versions filled from an upstream. */
  versionLimits?: SizeLimits;
  /** Signs the truth each write changes; without it, a write into a signed mirror is refused (mirror/signed.ts). */
  signer?: PrivateSigningKey;
}

/** Codes of a version that cannot be published as uploaded: the uploader's to fix, so a 422. */
const UNPUBLISHABLE = new Set(['HCL_SYNTAX', 'VERSION_READ_FAILED', 'VERSION_INVALID', 'MIRROR_INVALID', 'SOURCE_NOT_FOUND']);

export interface MirrorWriters extends RegistryHooks {
  /** A function, not a method: serve hands it to the management API on its own. */
  deprecate: (address: ModuleAddress, version: string, deprecation: Deprecation | null) => Promise<void>;
  /** Runs a write of this process in its turn (serve --upstream's provider packages taken in). */
  exclusive: <T>(write: () => Promise<T>) => Promise<T>;
  /** A version fetched from the upstream (serve --upstream), published like an upload; VERSION_CONFLICT when the mirror holds other bytes. */
  cache: (source: VersionSource) => Promise<{ sha256: string }>;
}

/** What an upload URL's signature names in place of a token. */
const UPLOAD_SIGNER = 'upload';

export function mirrorWriters(mirror: Mirror, signer: () => ArchiveSigner, options: PublishingOptions): MirrorWriters {
  const root = mirror.root;
  const signed = options.signer ? { signer: options.signer } : {};
  let queue: Promise<unknown> = Promise.resolve();
  /** One write of this process at a time, in the order asked; each then refreshes the served index. */
  const serial = <T>(write: () => Promise<T>): Promise<T> => {
    const run = async () => {
      try {
        return await write();
      } finally {
        mirror.refresh();
      }
    };
    const next = queue.then(run, run);
    queue = next.catch(() => {});
    return next;
  };

  return {
    published: (key) => mirror.current().byKey.get(key)?.versions,
    modulesOf: (namespace) =>
      mirror
        .current()
        .modules.filter((m) => m.summary.namespace === namespace)
        .map((m) => m.key),
    readOnly: () => (options.readOnly ? 'serve --read-only' : unwritable(dirname(root))),
    uploadUrl(path, req) {
      const base = options.baseUrl ?? `${options.tls ? 'https' : 'http'}://${req.headers.host ?? '127.0.0.1'}/`;
      // Signed like an archive URL; it is the link of one version, not of a token's reading, so it names no token.
      return `${new URL(path, base).href}?${signer().query(path, options.uploadUrlTtlSeconds, UPLOAD_SIGNER)}`;
    },
    checkUpload: (path, query) => {
      const check = signer().check(path, query);
      return check.status === 'valid' && check.token !== UPLOAD_SIGNER ? 'invalid' : check.status;
    },
    async ingest(address, version, body) {
      const dir = await mkdtemp(join(tmpdir(), 'modmirror-upload-'));
      // Through a PassThrough: a refused upload must not destroy the request, or its answer could not be sent.
      const input = new PassThrough();
      body.pipe(input);
      try {
        const files = join(dir, 'module');
        await unpackUpload(input, files, options.limits).catch((error: unknown) => {
          body.unpipe(input);
          body.resume();
          throw error;
        });
        const source = await uploadedVersion(files, address, version, options.moduleMeta(address));
        await serial(() =>
          publish(source, { outDir: root, cacheDir: options.cacheDir, baseUrl: '', imageHosts: options.imageHosts, remember: false, ...signed }),
        );
      } catch (error) {
        throw uploadError(error);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    remove: (target, version, by) =>
      serial(() =>
        removeModuleVersions({ ...target, ...(version !== undefined ? { version } : {}) }, { outDir: root, imageHosts: options.imageHosts, by, ...signed }),
      ).then(() => {}),
    deprecate: (address, version, deprecation) => serial(() => setDeprecation(root, address, version, deprecation, signed)).then(() => {}),
    exclusive: serial,
    // Not strict: an upstream's module that some parser cannot read is still the module clients asked for, as in a build.
    cache: (source) =>
      serial(() =>
        publish(source, {
          outDir: root,
          cacheDir: options.cacheDir,
          baseUrl: '',
          imageHosts: options.imageHosts,
          remember: false,
          strict: false,
          ...signed,
          ...(options.versionLimits ? { limits: options.versionLimits } : {}),
        }),
      ),
  };
}

/** Why the mirror's folder cannot be written (a read-only file system, no permission), or undefined. */
function unwritable(folder: string): string | undefined {
  try {
    accessSync(folder, constants.W_OK);
    return undefined;
  } catch (error) {
    return `its folder ${folder} is not writable: ${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}

/** A publish's failure as the upload's answer: the uploader's mistakes are 4xx, with publish's own words. */
function uploadError(error: unknown): unknown {
  if (!(error instanceof MirrorError)) return error;
  if (error.code === 'VERSION_CONFLICT') return new MirrorError('CONFLICT', error.message, { hint: error.hint, cause: error });
  if (UNPUBLISHABLE.has(error.code)) return new MirrorError('UNPROCESSABLE', error.message, { hint: error.hint, cause: error });
  return error;
}
