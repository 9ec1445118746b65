// Changes the CLI makes to the data folder: bootstrap users, organizations,
// teams and tokens, and record what a pipeline's run tasks did. They go
// through the same Store as the server, so they are atomic and serialized
// with a running server's writes.

import { createHash } from 'node:crypto';
import { MirrorError } from '../errors.js';
import { hashPassword, newId, newToken } from './auth.js';
import { issueToken, type TokenOptions, type TokenSubject } from './tokens.js';
import type { Store } from './store.js';
import { statusTimestamp } from './time.js';
import {
  EDITIONS,
  RESULT_STATUSES,
  RUN_STAGES,
  STAGE_STATUSES,
  type Edition,
  type Organization,
  type ResultStatus,
  type RunStage,
  type StageStatus,
  type TaskResult,
} from './types.js';

const fail = (message: string, hint?: string) => new MirrorError('DATA_INVALID', message, hint === undefined ? {} : { hint });
const now = () => new Date().toISOString();

export async function setEdition(store: Store, edition: string): Promise<void> {
  if (!EDITIONS.includes(edition as Edition)) throw new MirrorError('USAGE', `Unknown edition "${edition}"; expected one of ${EDITIONS.join(', ')}.`);
  await store.mutate(['settings'], (data) => void (data.settings = { edition: edition as Edition }));
}

export async function createUser(store: Store, input: { username: string; email: string; password?: string; siteAdmin: boolean }): Promise<{ id: string }> {
  if (input.password !== undefined && input.password.length < 10) throw new MirrorError('USAGE', 'The password must be at least 10 characters.');
  // Without --password the account has a random one: it authenticates with tokens only.
  const passwordHash = hashPassword(input.password ?? newToken());
  return store.mutate(['users'], (data) => {
    if (data.users.some((u) => u.username === input.username)) throw fail(`A user named "${input.username}" already exists.`);
    const id = newId('user');
    data.users.push({ id, username: input.username, email: input.email, unconfirmedEmail: null, passwordHash, isSiteAdmin: input.siteAdmin, createdAt: now() });
    return { id };
  });
}

export async function createOrganization(store: Store, input: { name: string; email: string; owner?: string }): Promise<{ id: string }> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/.test(input.name))
    throw new MirrorError('USAGE', `"${input.name}" is not a valid organization name (letters, digits, "-" and "_").`);
  return store.mutate(['organizations'], (data) => {
    // One name whatever its case: an organization owns the provider namespace of its name in lower case (auth.ts), so "Acme" would own acme's.
    const existing = data.organizations.find((o) => o.name.toLowerCase() === input.name.toLowerCase());
    if (existing?.name === input.name) throw fail(`An organization named "${input.name}" already exists.`);
    if (existing)
      throw fail(
        `An organization named "${existing.name}" already exists, and "${input.name}" differs from it only in case.`,
        `Organization names are unique regardless of case (provider namespaces are lower case): use "${existing.name}", or another name.`,
      );
    const owner = input.owner === undefined ? undefined : data.users.find((u) => u.username === input.owner);
    if (input.owner !== undefined && !owner) throw fail(`No user named "${input.owner}".`, 'Create the user first with modmirror user create.');
    data.organizations.push(newOrganization(input.name, { externalId: newId('org'), email: input.email, owners: owner ? [owner.id] : [], createdAt: now() }));
    return { id: input.name };
  });
}

/** An organization record with every setting at its default. */
export function newOrganization(name: string, fields: Pick<Organization, 'externalId' | 'email' | 'owners' | 'createdAt'>): Organization {
  return {
    name,
    externalId: fields.externalId,
    email: fields.email,
    accessBetaTools: false,
    isDisabled: false,
    applyTimeout: null,
    planTimeout: null,
    terraformWorkerSudoEnabled: false,
    globalModuleSharing: false,
    globalProviderSharing: false,
    ssoEnabled: false,
    workspaceLimit: null,
    owners: fields.owners,
    moduleConsumers: [],
    providerConsumers: [],
    createdAt: fields.createdAt,
  };
}

export async function createTeam(store: Store, input: { organization: string; name: string; members: string[] }): Promise<{ id: string }> {
  return store.mutate(['teams'], (data) => {
    if (!data.organizations.some((o) => o.name === input.organization)) throw fail(`No organization named "${input.organization}".`);
    if (data.teams.some((t) => t.organization === input.organization && t.name === input.name))
      throw fail(`The team "${input.name}" already exists in ${input.organization}.`);
    const members = input.members.map((username) => {
      const user = data.users.find((u) => u.username === username);
      if (!user) throw fail(`No user named "${username}".`);
      return user.id;
    });
    const id = newId('team');
    data.teams.push({ id, name: input.name, organization: input.organization, members });
    return { id };
  });
}

/** Returns the token itself, which exists only here: the data folder keeps its hash. */
export async function createToken(store: Store, subject: TokenSubject, options: TokenOptions = {}): Promise<string> {
  return (await issueToken(store, subject, options)).token;
}

export interface RunTaskRecord {
  run: string;
  organization?: string;
  workspace?: string;
  stage: string;
  stageStatus?: string;
  task: string;
  status: string;
  message?: string;
  url?: string;
  taskUrl?: string;
  enforcement: string;
  speculative: boolean;
}

/** The free edition's limit (spec 1, 8): one run task integration, on at most ten workspaces. */
const FREE_TASKS = 1;
const FREE_WORKSPACES = 10;

const stableId = (prefix: string, text: string) => `${prefix}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
const timestampKey = (status: string) => `${status.replace(/_/g, '-')}-at`;

function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if (!allowed.includes(value as T)) throw new MirrorError('USAGE', `Unknown ${what} "${value}"; expected one of ${allowed.join(', ')}.`);
  return value as T;
}

/** The stage's status follows its results unless the caller says otherwise (e.g. awaiting_override). */
function derivedStageStatus(results: TaskResult[]): StageStatus {
  const statuses = results.map((r) => r.status);
  if (statuses.some((s) => s === 'pending' || s === 'running')) return statuses.every((s) => s === 'pending') ? 'pending' : 'running';
  if (statuses.includes('errored')) return 'errored';
  if (results.some((r) => r.status === 'failed' && r.workspaceTaskEnforcementLevel === 'mandatory')) return 'failed';
  if (statuses.includes('unreachable')) return 'unreachable';
  if (statuses.length > 0 && statuses.every((s) => s === 'canceled')) return 'canceled';
  return 'passed';
}

export async function recordRunTask(store: Store, input: RunTaskRecord): Promise<{ run: string; stage: string; result: string }> {
  const stageName = oneOf<RunStage>(input.stage, RUN_STAGES, 'stage');
  const status = oneOf<ResultStatus>(input.status, RESULT_STATUSES, 'task result status');
  const stageStatus = input.stageStatus === undefined ? undefined : oneOf<StageStatus>(input.stageStatus, STAGE_STATUSES, 'stage status');
  if (!['mandatory', 'advisory'].includes(input.enforcement))
    throw new MirrorError('USAGE', `Unknown enforcement level "${input.enforcement}"; expected mandatory or advisory.`);
  return store.mutate(['runs', 'taskStages', 'taskResults'], (data) => {
    const at = new Date();
    let run = data.runs.find((r) => r.id === input.run);
    if (!run) {
      if (input.organization === undefined || input.workspace === undefined)
        throw fail(`There is no run ${input.run} yet: give --org and --workspace to create it.`);
      if (!data.organizations.some((o) => o.name === input.organization)) throw fail(`No organization named "${input.organization}".`);
      run = {
        id: input.run,
        organization: input.organization,
        workspace: { id: stableId('ws', `${input.organization}/${input.workspace}`), name: input.workspace },
        createdAt: at.toISOString(),
      };
    }
    const stagesOfOrg = new Set(data.taskStages.filter((s) => data.runs.find((r) => r.id === s.run)?.organization === run.organization).map((s) => s.id));
    // A task is known by its name within the organization: reuse the id it already has.
    const taskId =
      data.taskResults.find((r) => stagesOfOrg.has(r.taskStage) && r.taskName === input.task)?.taskId ?? stableId('task', `${run.organization}/${input.task}`);
    if (data.settings.edition === 'free') {
      const tasks = new Set(data.taskResults.filter((r) => stagesOfOrg.has(r.taskStage)).map((r) => r.taskId)).add(taskId);
      if (tasks.size > FREE_TASKS)
        throw fail(
          `The free edition allows ${FREE_TASKS} run task integration per organization; ${run.organization} would have ${tasks.size}.`,
          'Use one task name, or declare another edition in settings.json (modmirror edition set).',
        );
      const workspaces = new Set(
        data.runs.filter((r) => r.organization === run.organization && data.taskStages.some((s) => s.run === r.id)).map((r) => r.workspace.id),
      ).add(run.workspace.id);
      if (workspaces.size > FREE_WORKSPACES)
        throw fail(`The free edition allows run tasks on ${FREE_WORKSPACES} workspaces; ${run.organization} would have ${workspaces.size}.`);
    }
    if (!data.runs.includes(run)) data.runs.push(run);
    let stage = data.taskStages.find((s) => s.run === run.id && s.stage === stageName);
    if (!stage) {
      stage = {
        id: newId('ts'),
        run: run.id,
        stage: stageName,
        status: 'pending',
        statusTimestamps: { 'pending-at': statusTimestamp(at) },
        policyEvaluations: [],
        createdAt: at.toISOString(),
        updatedAt: at.toISOString(),
      };
      data.taskStages.push(stage);
    }
    let result = data.taskResults.find((r) => r.taskStage === stage.id && r.taskName === input.task);
    if (!result) {
      result = {
        id: newId('taskrs'),
        taskStage: stage.id,
        status: 'pending',
        message: '',
        statusTimestamps: {},
        url: '',
        taskId,
        taskName: input.task,
        taskUrl: '',
        isSpeculative: input.speculative,
        workspaceTaskId: stableId('wstask', `${run.workspace.id}/${taskId}`),
        workspaceTaskEnforcementLevel: input.enforcement,
        createdAt: at.toISOString(),
        updatedAt: at.toISOString(),
      };
      data.taskResults.push(result);
    }
    result.status = status;
    result.statusTimestamps[timestampKey(status)] = statusTimestamp(at);
    if (input.message !== undefined) result.message = input.message;
    if (input.url !== undefined) result.url = input.url;
    if (input.taskUrl !== undefined) result.taskUrl = input.taskUrl;
    result.workspaceTaskEnforcementLevel = input.enforcement;
    result.isSpeculative = input.speculative;
    result.updatedAt = at.toISOString();
    const next = stageStatus ?? derivedStageStatus(data.taskResults.filter((r) => r.taskStage === stage.id));
    if (next !== stage.status) stage.statusTimestamps[timestampKey(next)] = statusTimestamp(at);
    stage.status = next;
    stage.updatedAt = at.toISOString();
    return { run: run.id, stage: stage.id, result: result.id };
  });
}
