// Domain types shared by every stage: scan -> extract -> pack -> emit.
// Protocol documents (snake_case JSON) are built from these in src/protocol/documents.ts.

/** `<namespace>/<name>/<provider>`: the identity of a module in the registry protocol. */
export interface ModuleAddress {
  namespace: string;
  name: string;
  provider: string;
}

/** What a registry shows about a module beyond its files; set in the config. */
export interface ModuleMeta {
  owner: string;
  /** Empty means: take the first paragraph of the root README. */
  description: string;
  /** URL of the source repository; may be empty. */
  source: string;
  verified: boolean;
}

/** Where one version's files come from. */
export type VersionOrigin = { kind: 'folder'; dir: string } | { kind: 'git'; gitDir: string; commit: string; tree: string; subdir: string };

/** One module version found by the scan stage, not yet read. */
export interface VersionSource {
  address: ModuleAddress;
  meta: ModuleMeta;
  /** Normalised semver string (no leading `v`, no build metadata). */
  version: string;
  /** The tag or folder name the version came from. */
  tag: string;
  publishedAt: Date;
  origin: VersionOrigin;
  /** Changes whenever the version's files may have: git's tree id, or a folder's file names, sizes and times. */
  fingerprint: string;
  /** Human-readable origin for messages, e.g. `repo.git@v1.2.0`. */
  label: string;
}

/** A file of a module version, held in memory between read, extract and pack. */
export interface SourceFile {
  /** POSIX path relative to the module root. */
  path: string;
  /** Unix permission bits; only the executable bit survives packing. */
  mode: number;
  data: Buffer;
  /** A content id when the source already has one (git's blob id); saves hashing for the parse cache. */
  id?: string;
}

/** Where a file too large to hold is read again when it is packed: its path's bytes on disk, or a git blob. */
export type LargeSource = { kind: 'disk'; location: Uint8Array } | { kind: 'git'; gitDir: string; oid: string };

/**
 * A file of a module version that is not held (scan/large.ts says which):
 * its bytes are streamed into the archive, so a 1 GiB file costs a build
 * chunks of memory, not three copies of it.
 */
export interface LargeFile {
  path: string;
  mode: number;
  size: number;
  source: LargeSource;
  /** As SourceFile's: git's blob id, or the sha1 of its bytes once read for a folder version's identity. */
  id?: string;
}

export type VersionFile = SourceFile | LargeFile;

export const isHeld = (file: VersionFile): file is SourceFile => 'data' in file;
export const fileSize = (file: VersionFile): number => (isHeld(file) ? file.data.length : file.size);

/** Bounds on what one version may hold, in bytes (the config's `limits`). */
export interface SizeLimits {
  file: number;
  version: number;
}

export interface Input {
  name: string;
  /** Exact source text of the type expression, or the keyword of a quoted legacy type; empty if unset. */
  type: string;
  description: string;
  /** Decoded default value; `undefined` when the variable has no default (required). */
  default: unknown;
  required: boolean;
  sensitive: boolean;
  nullable: boolean;
}

export interface Output {
  name: string;
  description: string;
  sensitive: boolean;
}

export interface ResourceRef {
  name: string;
  type: string;
}

export interface ModuleCall {
  name: string;
  source: string;
  version: string;
}

export interface ProviderRequirement {
  /** Local name used in the module, e.g. `aws`. */
  name: string;
  /** Namespace part of the source address, e.g. `hashicorp`; empty when no source is given. */
  namespace: string;
  /** Source address as written, e.g. `hashicorp/aws`; empty when not given (also for one a resource implies): `hashicorp/NAME`. */
  source: string;
  /** Version constraints joined with `, `; empty when unconstrained. */
  version: string;
}

/** What extraction learns from one module directory (root, a submodule or an example). */
export interface ModuleContent {
  /** `''` for the root, else e.g. `modules/nat` or `examples/basic`. */
  path: string;
  readme: string;
  /** No .tf or .tf.json file in the directory. */
  empty: boolean;
  inputs: Input[];
  outputs: Output[];
  resources: ResourceRef[];
  dataSources: ResourceRef[];
  moduleCalls: ModuleCall[];
  /** Declared, configured by a `provider` block, or implied by a resource or data source (extract/providers.ts). */
  providers: ProviderRequirement[];
  requiredVersion: string;
}

export interface ExtractedVersion {
  root: ModuleContent;
  submodules: ModuleContent[];
  examples: ModuleContent[];
}

/**
 * A packed archive of one version: in memory, or (a version with large
 * files) in a file of the version cache's, moved into place when stored.
 */
export type PackedArchive = HeldArchive | FileArchive;
export interface HeldArchive {
  data: Buffer;
  sha256: string;
  size: number;
}
export interface FileArchive {
  file: string;
  sha256: string;
  size: number;
}

/** What the registry documents say about a version besides its content. */
export type VersionInfo = Pick<VersionSource, 'address' | 'meta' | 'version' | 'tag' | 'publishedAt'>;

/** Everything emit needs to know about one version, after extract and pack (or read back from a mirror). */
export interface BuiltVersion {
  source: VersionInfo;
  content: ExtractedVersion;
  archive: { sha256: string; size: number };
  /** Resolved description: config, else the README's first paragraph. */
  description: string;
}

/** A problem found while building that does not stop the other versions. */
export interface BuildProblem {
  /** Stable code, see src/errors.ts. */
  code: string;
  message: string;
  /** The file (and `:line:column`) or source the problem is about. */
  where?: string;
  /** The module version that failed (`namespace/name/provider` and its version), when one did. */
  module?: string;
  version?: string;
  /** HCL_SYNTAX: each file no parser could read, as `file:line:column: message` (the file relative to the version). */
  syntax?: string[];
}

/** A version mirrored with the documentation that could be read (build without --strict). */
export interface PartialVersion {
  /** `namespace/name/provider`. */
  module: string;
  version: string;
  /** The version's origin, e.g. `repo.git@v1.2.0`. */
  source: string;
  /** `file:line:column: message` for each file no parser could read. */
  problems: string[];
}

/** A deprecated version's reason and optional link to read more, as HCP Terraform gives them. */
export interface Deprecation {
  reason: string;
  link: string | null;
}
