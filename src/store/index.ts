// Where a mirror is kept: a folder or a bucket, behind one interface. A
// command names what it does to the mirror (publish a version or a
// provider release, deprecate a version, verify, unbundle) and the store does it where the mirror is. Both stores run
// the same writers (publish/ and mirror/, with the ledger and the write
// order): a folder's under its lock, renamed into place; a bucket's on the
// part of the mirror it fetched, committed by conditional writes of the
// module states (bucket/write.ts). Only this file knows which is which.

import type { BucketLocation } from '../bucket/location.js';
import type { Deprecation } from '../mirror/deprecations.js';
import type { TrustedKey } from '../openpgp/detached.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import type { Problem } from '../mirror/transaction.js';
import type { DeprecateResult } from '../publish/deprecate.js';
import type { PublishOptions, PublishResult } from '../publish/module.js';
import type { ProviderPublishOptions, ProviderPublishResult } from '../publish/provider.js';
import type { UnbundleOptions, UnbundleResult } from '../bundle/unbundle.js';
import type { ModuleAddress, VersionSource } from '../types.js';

export type StorePublishOptions = Omit<PublishOptions, 'outDir' | 'hashArchives' | 'reuseBuilt'>;

export interface StorePublishResult extends PublishResult {
  /** A bucket's: where it is, the objects uploaded, in order, and how many times the change was made (other writers won races first). */
  target?: string;
  uploaded?: string[];
  attempts?: number;
}

export interface StoreVerifyOptions {
  /** Write every derived document again from the truth first (verify --repair). */
  repair?: boolean;
  /** Also check that every module call and provider the mirror's modules need is in it, for these platforms (a folder's). */
  complete?: { platforms: string[] };
  /** A signed mirror: its truth must carry a good signature by one of these keys (verify/signed.ts). */
  trusted?: TrustedKey[];
}

export interface StoreVerifyResult {
  problems: Problem[];
  /** With repair: the derived documents written again. */
  repaired?: string[];
  warnings?: string[];
}

export interface MirrorStore {
  /** How messages name the mirror: `dist/` (relative to the working folder) or `s3://BUCKET/PREFIX/`. */
  readonly shown: string;
  /** What --json reports as the mirror: the folder's absolute path, or the bucket URL. */
  readonly location: string;
  publish(source: VersionSource, options: StorePublishOptions): Promise<StorePublishResult>;
  /** Publishes an in-house provider's release (its zips, SHA256SUMS and signature). */
  publishProvider(options: Omit<ProviderPublishOptions, 'outDir'>): Promise<ProviderPublishResult>;
  /** Sets (or, with null, lifts) a version's deprecation; `signer` signs the truth it changes. */
  deprecate(address: ModuleAddress, version: string, deprecation: Deprecation | null, signer?: PrivateSigningKey): Promise<DeprecateResult>;
  verify(options?: StoreVerifyOptions): Promise<StoreVerifyResult>;
  /**
   * Takes in a bundle: its versions and provider packages, with the replacements and removals its manifest records;
   * with `trust`, only when its signature is by one of those keys.
   */
  unbundle(file: string, options?: Pick<UnbundleOptions, 'trust'>): Promise<Omit<UnbundleResult, 'outDir'>>;
  close(): void;
}

export interface StoreOptions {
  /** The command, for hints that name it. */
  command: string;
  /** As the config's browse.imageHosts: for the browse page a write rewrites. */
  imageHosts: string[];
}

/** The store of a mirror in a folder or a bucket. A bucket's is loaded only when asked for: the AWS SDK is most of a second to load. */
export async function openStore(where: { dir: string } | { bucket: BucketLocation }, options: StoreOptions): Promise<MirrorStore> {
  if ('bucket' in where) {
    const { openBucketStore } = await import('./bucket.js');
    return openBucketStore(where.bucket, options);
  }
  const { openFolderStore } = await import('./folder.js');
  return openFolderStore(where.dir, options);
}
