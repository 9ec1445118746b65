// Bootstrap commands for the management data folder: user, org, team,
// token, edition, and run-task record for pipelines.

import { resolve } from 'node:path';
import { usageError, type Values } from './args.js';
import { createOrganization, createTeam, createToken, createUser, recordRunTask, setEdition } from '../management/bootstrap.js';
import { Store } from '../management/store.js';


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
    password: values['password'] as string | undefined,
    siteAdmin: values['site-admin'] === true,
  });
  console.log(JSON.stringify({ id }));
  return 0;
}

export async function runOrg(values: Values, positionals: string[]): Promise<number> {
  expectSub(positionals, 'create', 'org');
  const { id } = await createOrganization(storeOf(values), {
    name: required(values, 'name', 'org'),
    email: required(values, 'email', 'org'),
    owner: values['owner'] as string | undefined,
  });
  console.log(JSON.stringify({ id }));
  return 0;
}

export async function runTeam(values: Values, positionals: string[]): Promise<number> {
  expectSub(positionals, 'create', 'team');
  const members = typeof values['members'] === 'string' ? values['members'].split(',').filter(Boolean) : [];
  const { id } = await createTeam(storeOf(values), { organization: required(values, 'org', 'team'), name: required(values, 'name', 'team'), members });
  console.log(JSON.stringify({ id }));
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
  // The token alone on stdout, once: only its hash is kept.
  console.log(await createToken(storeOf(values), subject));
  return 0;
}

export async function runEdition(values: Values, positionals: string[]): Promise<number> {
  expectSub(positionals, 'set', 'edition');
  await setEdition(storeOf(values), positionals[1]!);
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
  console.log(JSON.stringify(ids));
  return 0;
}
