// Bootstrap commands for the management data folder: user, org (create, and
// share: module and provider sharing), team, token, edition, and run-task
// record for pipelines.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { printJson, usageError, type Values } from './args.js';
import { createOrganization, createTeam, createToken, createUser, recordRunTask, setEdition } from '../management/bootstrap.js';
import { setConsumers, setGlobalSharing, type Shared } from '../management/sharing.js';
import { Store } from '../management/store.js';

/** The password from a file or an environment variable: never from argv. */
function passwordOf(values: Values): string | undefined {
  const file = values['password-file'] as string | undefined;
  const env = values['password-env'] as string | undefined;
  if (file !== undefined && env !== undefined) throw usageError('user', 'Give the password with --password-file or --password-env, not both.');
  if (env !== undefined) {
    const value = process.env[env];
    if (value === undefined || value === '') throw usageError('user', `The environment variable ${env} (--password-env) is not set.`);
    return value;
  }
  if (file === undefined) return undefined;
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8').split(/\r?\n/, 1)[0];
  } catch (error) {
    throw usageError('user', `Cannot read --password-file "${file}": ${(error as Error).message}`);
  }
}

function required(values: Values, name: string, command: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw usageError(command, `Missing --${name}.`);
  return value;
}

function expectSub(positionals: string[], sub: string, command: string): void {
  if (positionals[0] !== sub) throw usageError(command, `Expected "modmirror ${command} ${sub}".`);
}

const storeOf = (values: Values) => new Store(resolve(String(values['data'] ?? 'data')));

export async function runUser(values: Values, positionals: string[]): Promise<number> {
  expectSub(positionals, 'create', 'user');
  const { id } = await createUser(storeOf(values), {
    username: required(values, 'username', 'user'),
    email: required(values, 'email', 'user'),
    password: passwordOf(values),
    siteAdmin: values['site-admin'] === true,
  });
  printJson({ id });
  return 0;
}

export async function runOrg(values: Values, positionals: string[]): Promise<number> {
  if (positionals[0] === 'share') return runOrgShare(values);
  expectSub(positionals, 'create', 'org');
  const { id } = await createOrganization(storeOf(values), {
    name: required(values, 'name', 'org'),
    email: required(values, 'email', 'org'),
    owner: values['owner'] as string | undefined,
  });
  printJson({ id });
  return 0;
}

/**
 * `org share`: with `--module-consumers`/`--provider-consumers` (a comma list,
 * empty for none) the organizations it shares with, global sharing off; with
 * `--global-module-sharing`/`--global-provider-sharing true|false` sharing with
 * everyone, which clears the consumers (spec 3.3, as the admin API does).
 */
async function runOrgShare(values: Values): Promise<number> {
  const name = required(values, 'name', 'org');
  const changes: (() => Promise<void>)[] = [];
  const store = storeOf(values);
  for (const kind of ['module', 'provider'] as Shared[]) {
    const consumers = values[`${kind}-consumers`];
    const global = values[`global-${kind}-sharing`];
    if (global !== undefined && global !== 'true' && global !== 'false')
      throw usageError('org', `--global-${kind}-sharing takes true or false, not "${String(global)}".`);
    if (typeof consumers === 'string' && global === 'true') {
      throw usageError('org', `--${kind}-consumers and --global-${kind}-sharing true contradict each other: sharing with everyone clears the consumers.`);
    }
    if (typeof consumers === 'string')
      changes.push(() =>
        setConsumers(
          store,
          name,
          kind,
          consumers
            .split(',')
            .map((c) => c.trim())
            .filter(Boolean),
        ),
      );
    else if (global !== undefined) changes.push(() => setGlobalSharing(store, name, kind, global === 'true'));
  }
  if (changes.length === 0)
    throw usageError('org', 'Say what to share: --module-consumers, --provider-consumers, --global-module-sharing or --global-provider-sharing.');
  for (const change of changes) await change();
  const org = store.read().organizations.find((o) => o.name === name)!;
  printJson({
    name,
    'global-module-sharing': org.globalModuleSharing,
    'module-consumers': org.moduleConsumers,
    'global-provider-sharing': org.globalProviderSharing,
    'provider-consumers': org.providerConsumers,
  });
  return 0;
}

export async function runTeam(values: Values, positionals: string[]): Promise<number> {
  expectSub(positionals, 'create', 'team');
  const members = typeof values['members'] === 'string' ? values['members'].split(',').filter(Boolean) : [];
  const { id } = await createTeam(storeOf(values), { organization: required(values, 'org', 'team'), name: required(values, 'name', 'team'), members });
  printJson({ id });
  return 0;
}

export async function runToken(values: Values, positionals: string[]): Promise<number> {
  expectSub(positionals, 'create', 'token');
  const user = values['user'] as string | undefined;
  const team = values['team'] as string | undefined;
  const org = values['org'] as string | undefined;
  let subject: Parameters<typeof createToken>[1];
  if (user !== undefined && team === undefined && org === undefined) subject = { user };
  else if (team !== undefined && org !== undefined && user === undefined) subject = { team, organization: org };
  else if (org !== undefined && user === undefined && team === undefined) subject = { organization: org };
  else throw usageError('token', 'Give one of --user NAME, --team NAME --org ORG, or --org NAME.');
  // The token alone on stdout (or in JSON), once: only its hash is kept.
  const token = await createToken(storeOf(values), subject);
  if (values['json'] === true) printJson({ token });
  else console.log(token);
  return 0;
}

export async function runEdition(values: Values, positionals: string[]): Promise<number> {
  expectSub(positionals, 'set', 'edition');
  await setEdition(storeOf(values), positionals[1]!);
  if (values['json'] === true) printJson({ edition: positionals[1]! });
  return 0;
}

export async function runRunTask(values: Values, positionals: string[]): Promise<number> {
  expectSub(positionals, 'record', 'run-task');
  const ids = await recordRunTask(storeOf(values), {
    run: required(values, 'run', 'run-task'),
    organization: values['org'] as string | undefined,
    workspace: values['workspace'] as string | undefined,
    stage: (values['stage'] as string | undefined) ?? 'post_plan',
    stageStatus: values['stage-status'] as string | undefined,
    task: required(values, 'task', 'run-task'),
    status: required(values, 'status', 'run-task'),
    message: values['message'] as string | undefined,
    url: values['url'] as string | undefined,
    taskUrl: values['task-url'] as string | undefined,
    enforcement: (values['enforcement'] as string | undefined) ?? 'mandatory',
    speculative: values['speculative'] === true,
  });
  printJson(ids);
  return 0;
}
