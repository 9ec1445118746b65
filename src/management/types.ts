// The management shim's data model, as stored in the data folder's JSON
// files (one file per collection). Attribute names are ours; the JSON:API
// documents of spec 2.2-2.5 are built from these in ./documents.ts.

/** Section 1: admin endpoints exist only on the self-hosted edition; the free edition limits run tasks. */
export type Edition = 'self-hosted' | 'free' | 'standard' | 'plus';
export const EDITIONS: Edition[] = ['self-hosted', 'free', 'standard', 'plus'];

export interface Settings {
  edition: Edition;
}

export interface User {
  id: string;
  username: string;
  email: string;
  unconfirmedEmail: string | null;
  /** `scrypt$<salt>$<hash>`, hex. */
  passwordHash: string;
  isSiteAdmin: boolean;
  createdAt: string;
  /** `ISSUER#SUBJECT` of the identity provider account that signs in as this user (single sign-on). */
  ssoSubject?: string;
}

export type TokenKind = 'user' | 'team' | 'organization';

export interface Token {
  id: string;
  kind: TokenKind;
  /** A user id, a team id or an organization name. */
  subject: string;
  /** sha256 of the token, hex: tokens are random, so a fast hash cannot be reversed. */
  hash: string;
  createdAt: string;
  /** What the token is for, as its creator said; absent on tokens made before descriptions. */
  description?: string;
  /** When it stops working (ISO 8601); absent or null: never. */
  expiresAt?: string | null;
  /** Recorded at most once a minute (token-use.ts), so to within a minute. */
  lastUsedAt?: string | null;
}

export interface Team {
  id: string;
  name: string;
  organization: string;
  /** User ids. */
  members: string[];
  /** HCP's organization access "manage-modules": the team (and its token) may publish and delete the organization's private modules. */
  manageModules?: boolean;
}

export interface Organization {
  name: string;
  externalId: string;
  email: string;
  accessBetaTools: boolean;
  isDisabled: boolean;
  applyTimeout: string | null;
  planTimeout: string | null;
  terraformWorkerSudoEnabled: boolean;
  globalModuleSharing: boolean;
  globalProviderSharing: boolean;
  ssoEnabled: boolean;
  workspaceLimit: number | null;
  /** User ids. */
  owners: string[];
  /** Names of organizations this one shares modules / providers with. */
  moduleConsumers: string[];
  providerConsumers: string[];
  createdAt: string;
}

export const STAGE_STATUSES = ['pending', 'running', 'passed', 'failed', 'awaiting_override', 'errored', 'canceled', 'unreachable'] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];
export const RESULT_STATUSES = ['pending', 'running', 'passed', 'failed', 'errored', 'canceled', 'unreachable'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];
export const RUN_STAGES = ['pre_plan', 'post_plan', 'pre_apply', 'post_apply'] as const;
export type RunStage = (typeof RUN_STAGES)[number];

export interface Run {
  id: string;
  organization: string;
  workspace: { id: string; name: string };
  createdAt: string;
}

export interface TaskStage {
  id: string;
  run: string;
  stage: RunStage;
  status: StageStatus;
  /** `<status>-at` (hyphenated) -> timestamp with offset, for each status reached. */
  statusTimestamps: Record<string, string>;
  policyEvaluations: string[];
  createdAt: string;
  updatedAt: string;
}

export interface TaskResult {
  id: string;
  taskStage: string;
  status: ResultStatus;
  message: string;
  statusTimestamps: Record<string, string>;
  url: string;
  taskId: string;
  taskName: string;
  taskUrl: string;
  isSpeculative: boolean;
  workspaceTaskId: string;
  workspaceTaskEnforcementLevel: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * A private registry module made through the API (HCP's "registry-modules"
 * without a VCS connection) before or besides its versions in the mirror;
 * modules the mirror holds are registry modules whether or not they have one.
 */
export interface RegistryModuleEntry {
  id: string;
  organization: string;
  /** The organization: a private module's namespace is its organization. */
  namespace: string;
  name: string;
  provider: string;
  createdAt: string;
  updatedAt: string;
}

/** HCP's version statuses that a version made through the API passes: made, uploading, then in the mirror or failed. */
export type ModuleVersionStatus = 'pending' | 'reg_ingressing' | 'ok' | 'reg_ingress_failed';

/** A version made through the API (`registry-module-versions`), with its upload's fate. */
export interface ModuleVersionEntry {
  id: string;
  /** `namespace/name/provider`. */
  module: string;
  version: string;
  commitSha: string | null;
  status: ModuleVersionStatus;
  /** Why the upload failed (`reg_ingress_failed`). */
  error?: string;
  createdAt: string;
  updatedAt: string;
}

/** Everything in the data folder. */
export interface Data {
  settings: Settings;
  users: User[];
  tokens: Token[];
  teams: Team[];
  organizations: Organization[];
  runs: Run[];
  taskStages: TaskStage[];
  taskResults: TaskResult[];
  registryModules: RegistryModuleEntry[];
  moduleVersions: ModuleVersionEntry[];
}

export type Collection = keyof Data;
