// Bootstrap commands for the management data folder: user, org (create, and
// share: module and provider sharing), team, token (create, list, revoke),
// edition, and run-task record for pipelines.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { printJson, usageError } from './args.js';
import { MirrorError } from '../errors.js';
import { isExpired } from '../management/auth.js';
import { createOrganization, createTeam, createUser, recordRunTask, setEdition } from '../management/bootstrap.js';
import { durationSeconds, issueToken, revokeToken, subjectOf, tokensOf, type TokenSubject } from '../management/tokens.js';
import { setConsumers, setGlobalSharing, type Shared } from '../management/sharing.js';
import { Store } from '../management/store.js';
import type { EditionFlags, OrgFlags, RunTaskFlags, TeamFlags, TokenFlags, UserFlags } from './options/manage.js';

/** The password from a file or an environment variable: never from argv. */
function passwordOf(values: UserFlags): string | undefined {
  const file = values['password-file'];
  const env = values['password-env'];
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

/** A string flag the command cannot do without. */
function required(value: string | undefined, name: string, command: string): string {
  if (value === undefined || value === '') throw usageError(command, `Missing --${name}.`);
  return value;
}

function expectSub(positionals: string[], sub: string, command: string): void {
  if (positionals[0] !== sub) throw usageError(command, `Expected "modmirror ${command} ${sub}".`);
}

const storeOf = (values: { data?: string | undefined }) => new Store(resolve(values.data ?? 'data'));

export async function runUser(values: UserFlags, positionals: string[]): Promise<number> {
  expectSub(positionals, 'create', 'user');
  const { id } = await createUser(storeOf(values), {
    username: required(values.username, 'username', 'user'),
    email: required(values.email, 'email', 'user'),
    password: passwordOf(values),
    siteAdmin: values['site-admin'] === true,
  });
  printJson({ id });
  return 0;
}

export async function runOrg(values: OrgFlags, positionals: string[]): Promise<number> {
  if (positionals[0] === 'share') return runOrgShare(values);
  expectSub(positionals, 'create', 'org');
  const { id } = await createOrganization(storeOf(values), {
    name: required(values.name, 'name', 'org'),
    email: required(values.email, 'email', 'org'),
    owner: values.owner,
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
async function runOrgShare(values: OrgFlags): Promise<number> {
  const name = required(values.name, 'name', 'org');
  const changes: (() => Promise<void>)[] = [];
  const store = storeOf(values);
  for (const kind of ['module', 'provider'] as Shared[]) {
    const consumers = values[`${kind}-consumers`];
    const global = values[`global-${kind}-sharing`];
    if (global !== undefined && global !== 'true' && global !== 'false')
      throw usageError('org', `--global-${kind}-sharing takes true or false, not "${global}".`);
    if (consumers !== undefined && global === 'true') {
      throw usageError('org', `--${kind}-consumers and --global-${kind}-sharing true contradict each other: sharing with everyone clears the consumers.`);
    }
    if (consumers !== undefined)
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

export async function runTeam(values: TeamFlags, positionals: string[]): Promise<number> {
  expectSub(positionals, 'create', 'team');
  const members = values.members?.split(',').filter(Boolean) ?? [];
  const { id } = await createTeam(storeOf(values), {
    organization: required(values.org, 'org', 'team'),
    name: required(values.name, 'name', 'team'),
    members,
  });
  printJson({ id });
  return 0;
}

export async function runToken(values: TokenFlags, positionals: string[]): Promise<number> {
  const sub = positionals[0];
  if (sub === 'list') return runTokenList(values, positionals);
  if (sub === 'revoke') return runTokenRevoke(values, positionals);
  expectSub(positionals, 'create', 'token');
  noId(positionals);
  const { description } = values;
  const expiresIn = values['expires-in'];
  const seconds = expiresIn === undefined ? undefined : durationSeconds(expiresIn);
  if (expiresIn !== undefined && seconds === undefined)
    throw usageError('token', `--expires-in "${expiresIn}" is not a duration: give a number and m, h, d or w, such as 90d or 12h.`);
  const expiresAt = seconds === undefined ? undefined : new Date(Date.now() + seconds * 1000).toISOString();
  // The token alone on stdout (or in JSON), once: only its hash is kept.
  const made = await issueToken(storeOf(values), subjectFlags(values), {
    ...(description === undefined ? {} : { description }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  });
  if (values.json === true) printJson({ token: made.token, id: made.id, expires: made.record.expiresAt ?? null });
  else console.log(made.token);
  return 0;
}

/** --user, --team with --org, or --org alone: whom a token acts for. */
function subjectFlags(values: TokenFlags): TokenSubject {
  const { user, team, org } = values;
  if (user !== undefined && team === undefined && org === undefined) return { user };
  if (team !== undefined && org !== undefined && user === undefined) return { team, organization: org };
  if (org !== undefined && user === undefined && team === undefined) return { organization: org };
  throw usageError('token', 'Give one of --user NAME, --team NAME --org ORG, or --org NAME.');
}

function noId(positionals: string[]): void {
  if (positionals[1] !== undefined) throw usageError('token', `Unexpected argument "${positionals[1]}": only token revoke takes an ID.`);
}

async function runTokenList(values: TokenFlags, positionals: string[]): Promise<number> {
  noId(positionals);
  const subject = subjectFlags(values);
  const data = storeOf(values).read();
  const { kind, id } = subjectOf(data, subject);
  const now = Date.now();
  const tokens = tokensOf(data, kind, id).map((t) => ({
    id: t.id,
    description: t.description ?? null,
    created: t.createdAt,
    'last-used': t.lastUsedAt ?? null,
    expires: t.expiresAt ?? null,
    expired: isExpired(t, now),
  }));
  if (values.json === true) {
    printJson({ tokens });
    return 0;
  }
  if (tokens.length === 0) {
    console.log('No tokens.');
    return 0;
  }
  const rows = [
    ['ID', 'DESCRIPTION', 'CREATED', 'LAST USED', 'EXPIRES'],
    ...tokens.map((t) => [
      t.id,
      t.description ?? '-',
      t.created,
      t['last-used'] ?? 'never',
      t.expires === null ? 'never' : `${t.expires}${t.expired ? ' (expired)' : ''}`,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) console.log(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
  return 0;
}

async function runTokenRevoke(values: TokenFlags, positionals: string[]): Promise<number> {
  const id = positionals[1];
  if (id === undefined) throw usageError('token', 'Name the token: modmirror token revoke ID (modmirror token list shows the ids).');
  if (!(await revokeToken(storeOf(values), id)))
    throw new MirrorError('DATA_INVALID', `No token with the id "${id}".`, { hint: 'modmirror token list --user NAME (or --team, --org) shows the ids.' });
  if (values.json === true) printJson({ revoked: id });
  else console.error(`Revoked ${id}.`);
  return 0;
}

export async function runEdition(values: EditionFlags, positionals: string[]): Promise<number> {
  expectSub(positionals, 'set', 'edition');
  await setEdition(storeOf(values), positionals[1]!);
  if (values.json === true) printJson({ edition: positionals[1]! });
  return 0;
}

export async function runRunTask(values: RunTaskFlags, positionals: string[]): Promise<number> {
  expectSub(positionals, 'record', 'run-task');
  const ids = await recordRunTask(storeOf(values), {
    run: required(values.run, 'run', 'run-task'),
    organization: values.org,
    workspace: values.workspace,
    stage: values.stage ?? 'post_plan',
    stageStatus: values['stage-status'],
    task: required(values.task, 'task', 'run-task'),
    status: required(values.status, 'status', 'run-task'),
    message: values.message,
    url: values.url,
    taskUrl: values['task-url'],
    enforcement: values.enforcement ?? 'mandatory',
    speculative: values.speculative === true,
  });
  printJson(ids);
  return 0;
}
