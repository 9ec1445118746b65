// What `sync` is asked to do and what it reports: shared by the sync stage,
// the dependency walk and the command that prints (or --json writes) it.

import type { ModuleSpec } from '../protocol/constraint.js';
import type { ProviderSpec } from '../protocol/provider-address.js';

export interface DependencyOptions {
  /** Follow the module calls of mirrored versions (default on; `--no-dependencies` turns it off). */
  follow: boolean;
  /** For a call's constraint: the newest match, as `terraform init` picks, or every match. */
  pick: 'newest' | 'every';
  /** Public registry hosts the upstream stands in for; a call without a host means registry.terraform.io. */
  standsInFor: string[];
}

export interface SyncPlan {
  /** The upstream registry; discovery is read from its host. */
  from: URL;
  /** Absolute path of the module folder to fill; undefined when only providers are synced. */
  into: string | undefined;
  modules: ModuleSpec[];
  /** Absolute paths of Terraform configuration folders whose module calls are mirrored (`--for`). */
  configurations: string[];
  dependencies: DependencyOptions;
  token?: string;
  /** Providers named outright (`--provider`, a `sync:` entry's `providers:`): every matching version. */
  providers: ProviderSpec[];
  /** os_arch platforms whose packages are fetched. */
  platforms: string[];
  /**
   * Absolute path of the provider folder to fill; undefined when there is
   * none, and the providers found are then only reported.
   */
  providersInto?: string;
}

export interface VersionRecord {
  module: string;
  version: string;
  /** The call that led here; absent for a module named in the plan. */
  calledFrom?: string;
}

export interface FetchedVersion extends VersionRecord {
  files: number;
}

export interface SyncFailure {
  /** NS/NAME/PROVIDER, for a module. */
  module?: string;
  /** HOST/NS/TYPE, for a provider. */
  provider?: string;
  version?: string;
  platform?: string;
  calledFrom?: string;
  message: string;
}

/** A module call the mirror cannot answer, and why. */
export interface NotMirrored {
  source: string;
  /** The call's version constraint as written. */
  version: string;
  calledFrom: string;
  /**
   * local: a path in the caller's own files; git, url, other: fetched by go-getter; other-host: a registry this
   * upstream does not stand in for; no-providers-service: a provider, from an upstream serving modules only.
   */
  reason: 'local' | 'git' | 'url' | 'other' | 'other-host' | 'no-providers-service';
  message: string;
}

/** A provider a configuration or a mirrored module requires. */
export interface ProviderFound {
  name: string;
  source: string;
  version: string;
  calledFrom: string;
}

export interface SyncResult {
  fetched: FetchedVersion[];
  /** Versions wanted that the folder already had. */
  present: VersionRecord[];
  failures: SyncFailure[];
  notMirrored: NotMirrored[];
  /** Each cycle of calls found, as `NS/NAME/PROVIDER VERSION` from the first repeat to itself. */
  cycles: string[][];
  providers: ProviderFound[];
  /** Provider versions wanted, with the platforms fetched now and those already in the folder. */
  providerVersions: ProviderVersionRecord[];
  /** Packages the upstream has not for a platform (its download answered 404): not fatal. */
  providerUnavailable: { provider: string; version: string; platform: string }[];
}

/** A result with nothing in it yet, for a run to fill. */
export function emptySyncResult(): SyncResult {
  return { fetched: [], present: [], failures: [], notMirrored: [], cycles: [], providers: [], providerVersions: [], providerUnavailable: [] };
}

export interface ProviderVersionRecord {
  provider: string;
  version: string;
  fetched: string[];
  present: string[];
  /** The requirement that led here (`dir: required_providers`, a module version, a lock file); absent when named outright. */
  calledFrom?: string;
}
