// One error type for the whole tool: a stable code, a message saying what
// happened, a hint saying what to do, and the cause it wraps.

export type ErrorCode =
  | 'USAGE'
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_INVALID'
  | 'SOURCE_NOT_FOUND'
  | 'GIT_FAILED'
  | 'HCL_SYNTAX'
  | 'VERSION_READ_FAILED'
  | 'VERSION_INVALID'
  | 'BUILD_FAILED'
  | 'VERSION_CONFLICT'
  | 'DATA_INVALID'
  | 'OUTPUT_FAILED'
  | 'BUNDLE_INVALID'
  | 'BUNDLE_CONFLICT'
  | 'UPSTREAM_FAILED';

export class MirrorError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MirrorError';
    this.code = code;
    this.hint = options.hint;
  }
}

/** Exit codes the CLI promises: 0 ok, 1 failure, 2 usage error. */
export function exitCodeFor(error: unknown): number {
  return error instanceof MirrorError && error.code === 'USAGE' ? 2 : 1;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
