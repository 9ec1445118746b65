// One error type for the whole tool: a stable code, a message saying what
// happened, a hint saying what to do, and the cause it wraps. The CLI turns
// the code into an exit code (exitCodeFor); the server into an HTTP status
// (http/errors.ts), the only place that knows statuses.

export type ErrorCode =
  | 'USAGE'
  /** The config file named (or the default ./mirror.config.yaml, when the command needs one) is not there. */
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_INVALID'
  /** A module source, ref or key file named on the command line is not there. */
  | 'SOURCE_NOT_FOUND'
  /** Another path a command was given, or defaults to, is not there: a mirror, a bundle, a log, a manifest. */
  | 'PATH_NOT_FOUND'
  | 'GIT_FAILED'
  | 'HCL_SYNTAX'
  | 'VERSION_READ_FAILED'
  /** A version's file, or all its files, over the config's `limits`: that version fails, the others build. */
  | 'FILE_TOO_LARGE'
  | 'VERSION_TOO_LARGE'
  | 'VERSION_INVALID'
  /** A provider folder's zip, hash or SHA256SUMS does not check out: the build refuses it. */
  | 'PROVIDER_INVALID'
  /** A mirror fails verification: one a command was given (bundle, push), or what a write made of it (build, publish), which is then not made live. */
  | 'MIRROR_INVALID'
  | 'VERSION_CONFLICT'
  | 'DATA_INVALID'
  | 'OUTPUT_FAILED'
  | 'BUNDLE_INVALID'
  | 'BUNDLE_CONFLICT'
  /** unbundle --trust: the bundle's signature does not show a trusted key signed these bytes (unsigned, another key, altered, unreadable, an expired or revoked key). */
  | 'BUNDLE_UNTRUSTED'
  /** A key file given cannot serve: not an OpenPGP key, the other half (a public key to sign with, a private one to trust), a key that cannot sign, a passphrase that does not unlock it. */
  | 'KEY_INVALID'
  /** A write without a signing key that would change a signed mirror's truth, leaving signatures that no longer match: refused. */
  | 'SIGNING_KEY_REQUIRED'
  | 'UPSTREAM_FAILED'
  /** `serve` could not start: the address is taken, a TLS file is unreadable or unusable. */
  | 'SERVE_FAILED'
  /** Another process holds a lock and did not let go in time: worth trying again. */
  | 'LOCK_BUSY'
  // What an HTTP request did wrong (http/errors.ts gives each its status).
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'URI_TOO_LONG'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'INVALID_ATTRIBUTE'
  /** An upload that cannot be published (not a gzip tar, entries outside the module, a module that fails to build). */
  | 'UNPROCESSABLE'
  | 'HEADERS_TOO_LARGE'
  /** serve --upstream: the upstream failed (refused, 5xx, a bad answer) and the mirror holds nothing to answer with. */
  | 'BAD_GATEWAY'
  /** serve --upstream: the upstream did not answer in time and the mirror holds nothing to answer with. */
  | 'GATEWAY_TIMEOUT';

export interface MirrorErrorOptions {
  hint?: string;
  cause?: unknown;
  /** A request's error: the JSON pointer of the body field at fault (JSON:API `source.pointer`, spec 7.1). */
  pointer?: string;
  /** METHOD_NOT_ALLOWED: the methods the path does accept, for the answer's `Allow` header. */
  allow?: string[];
}

export class MirrorError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly pointer: string | undefined;
  readonly allow: string[] | undefined;

  constructor(code: ErrorCode, message: string, options: MirrorErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MirrorError';
    this.code = code;
    this.hint = options.hint;
    this.pointer = options.pointer;
    this.allow = options.allow;
  }
}

/**
 * The errors that say the command as given cannot run, before any work: a
 * wrong argument (a key file among them), or a path it was given (or defaults
 * to) that is not there. A path a config file names is the config's problem
 * (CONFIG_INVALID, 1).
 */
const USAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['USAGE', 'CONFIG_NOT_FOUND', 'SOURCE_NOT_FOUND', 'PATH_NOT_FOUND', 'KEY_INVALID']);

/** Exit codes the CLI promises (README's table): 0 ok, 1 failure, 2 usage error, a missing path among them. */
export function exitCodeFor(error: unknown): number {
  return error instanceof MirrorError && USAGE_CODES.has(error.code) ? 2 : 1;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
