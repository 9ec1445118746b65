// The management data's bootstrap commands: user, org, team, token, edition, run-task.

import { EDITIONS } from '../../management/types.js';
import { command, type Flags, type FlagValues } from '../args.js';

const DATA = { type: 'string', value: 'DIR', help: 'the management data folder serve reads (default: data)' } as const;

export const USER_OPTIONS = {
  username: { type: 'string', value: 'NAME', help: 'the username, which tokens and teams name the user by' },
  email: { type: 'string', value: 'ADDR', help: "the user's e-mail address" },
  'password-file': { type: 'string', value: 'FILE', help: "read the password from FILE's first line (- for standard input)" },
  'password-env': { type: 'string', value: 'VAR', help: 'read the password from the environment variable VAR' },
  'site-admin': { type: 'boolean', help: 'the user is a site administrator (the site-admin endpoints; /metrics in private mode)' },
  data: DATA,
  json: { type: 'boolean', help: "accepted, as on every command: the user's id is printed as JSON anyway" },
} as const satisfies Flags;

export const ORG_OPTIONS = {
  name: { type: 'string', value: 'NAME', help: "the organization's name" },
  email: { type: 'string', value: 'ADDR', help: "create: the organization's e-mail address" },
  owner: { type: 'string', value: 'USERNAME', help: 'create: a user who owns it (made with modmirror user create)' },
  'module-consumers': {
    type: 'string',
    value: 'ORG,ORG',
    help: 'share: the organizations that read its modules (a comma list, "" for none); turns global module sharing off',
  },
  'global-module-sharing': { type: 'string', value: 'true|false', help: 'share: every organization reads its modules; true clears the module consumers' },
  'provider-consumers': {
    type: 'string',
    value: 'ORG,ORG',
    help: 'share: the organizations that read its in-house providers (a comma list, "" for none); turns global provider sharing off',
  },
  'global-provider-sharing': {
    type: 'string',
    value: 'true|false',
    help: 'share: every organization reads its in-house providers; true clears the provider consumers',
  },
  data: DATA,
  json: { type: 'boolean', help: 'accepted, as on every command: the result is printed as JSON anyway' },
} as const satisfies Flags;

export const TEAM_OPTIONS = {
  org: { type: 'string', value: 'ORG', help: 'the organization the team is in (made with modmirror org create)' },
  name: { type: 'string', value: 'NAME', help: "the team's name, unique in its organization" },
  members: { type: 'string', value: 'USER,USER', help: 'the users in the team, by username (a comma list; default: none)' },
  data: DATA,
  json: { type: 'boolean', help: "accepted, as on every command: the team's id is printed as JSON anyway" },
} as const satisfies Flags;

export const TOKEN_OPTIONS = {
  user: { type: 'string', value: 'NAME', help: 'a token that acts as this user (by username)' },
  team: { type: 'string', value: 'NAME', help: 'with --org ORG: a token that acts as this team of ORG (a service user)' },
  org: { type: 'string', value: 'NAME', help: "alone: the organization's token, which acts as the organization (a service user)" },
  description: { type: 'string', value: 'TEXT', help: 'what the token is for, shown by list' },
  'expires-in': {
    type: 'string',
    value: 'DURATION',
    help: 'the token stops working after this long: a number and m, h, d or w (90d, 12h, 1w); default: never',
  },
  data: DATA,
  json: {
    type: 'boolean',
    help: 'create: print {"token","id","expires"} rather than the token alone; list: one JSON object with the tokens; revoke: {"revoked"}',
  },
} as const satisfies Flags;

export const EDITION_OPTIONS = {
  data: DATA,
  json: { type: 'boolean', help: 'print {"edition"} once it is set (without it, nothing is printed)' },
} as const satisfies Flags;

export const RUN_TASK_OPTIONS = {
  run: { type: 'string', value: 'RUN_ID', help: 'the run the result is for (recorded if it is not yet, with --org and --workspace)' },
  org: { type: 'string', value: 'ORG', help: 'with --workspace: the organization of a run not recorded yet' },
  workspace: { type: 'string', value: 'NAME', help: 'with --org: the workspace of a run not recorded yet' },
  stage: { type: 'string', value: 'STAGE', help: 'the stage of the run (default: post_plan)' },
  'stage-status': { type: 'string', value: 'STATUS', help: "the stage's status, when not the one its results give (for example awaiting_override)" },
  task: { type: 'string', value: 'NAME', help: 'the run task whose result this is' },
  status: { type: 'string', value: 'STATUS', help: 'the result: pending, running, passed, failed, errored, canceled or unreachable' },
  message: { type: 'string', value: 'TEXT', help: 'what the task says of the result' },
  url: { type: 'string', value: 'URL', help: "the result's URL, where its details are" },
  'task-url': { type: 'string', value: 'URL', help: "the run task's URL" },
  enforcement: { type: 'string', value: 'LEVEL', help: "the task's enforcement level: mandatory (default) or advisory" },
  speculative: { type: 'boolean', help: 'the run is a speculative plan' },
  data: DATA,
  json: { type: 'boolean', help: 'accepted, as on every command: the ids are printed as JSON anyway' },
} as const satisfies Flags;

export type UserFlags = FlagValues<typeof USER_OPTIONS>;
export type OrgFlags = FlagValues<typeof ORG_OPTIONS>;
export type TeamFlags = FlagValues<typeof TEAM_OPTIONS>;
export type TokenFlags = FlagValues<typeof TOKEN_OPTIONS>;
export type EditionFlags = FlagValues<typeof EDITION_OPTIONS>;
export type RunTaskFlags = FlagValues<typeof RUN_TASK_OPTIONS>;

export const user = command({
  summary: 'Management data: create a user (modmirror user create)',
  usage: 'modmirror user create --username NAME --email ADDR [--password-file FILE | --password-env VAR] [--site-admin] [--data DIR] [--json]',
  options: USER_OPTIONS,
  notes: `Without either password flag, the account has a random password and signs in with tokens only. A
password is never taken on the command line, where ps and shell history would show it.`,
  positionals: { names: ['create'], required: 1 },
  run: async (values, positionals) => (await import('../manage.js')).runUser(values, positionals),
});

export const org = command({
  summary: 'Management data: create an organization, or set what it shares with others',
  usage: `modmirror org create --name NAME --email ADDR [--owner USERNAME] [--data DIR] [--json]
       modmirror org share --name NAME [--module-consumers ORG,ORG] [--global-module-sharing true|false]
                           [--provider-consumers ORG,ORG] [--global-provider-sharing true|false] [--data DIR]`,
  options: ORG_OPTIONS,
  notes: `share: who reads the organization's modules and in-house providers in serve --access private.
Consumers (a comma list, "" for none) turn that kind's global sharing off; global sharing on
clears that kind's consumers. Prints the organization's sharing as JSON (create: its id).`,
  positionals: { names: ['create|share'], required: 1 },
  run: async (values, positionals) => (await import('../manage.js')).runOrg(values, positionals),
});

export const team = command({
  summary: 'Management data: create a team in an organization',
  usage: 'modmirror team create --org ORG --name NAME [--members USER,USER] [--data DIR] [--json]',
  options: TEAM_OPTIONS,
  positionals: { names: ['create'], required: 1 },
  run: async (values, positionals) => (await import('../manage.js')).runTeam(values, positionals),
});

export const token = command({
  summary: 'Management data: create, list and revoke API tokens; a token is printed once, only its hash is kept',
  usage: `modmirror token create (--user NAME | --team NAME --org ORG | --org NAME) [--description TEXT] [--expires-in DURATION] [--data DIR] [--json]
       modmirror token list (--user NAME | --team NAME --org ORG | --org NAME) [--data DIR] [--json]
       modmirror token revoke ID [--data DIR] [--json]`,
  options: TOKEN_OPTIONS,
  notes: `create prints the token once, on standard output; the data folder keeps only its hash. list shows
each token's id, description, creation, last use (to within a minute) and expiry, never the token.
A running serve refuses a revoked or expired token from the next request on.`,
  positionals: { names: ['create|list|revoke', 'ID'], required: 1 },
  run: async (values, positionals) => (await import('../manage.js')).runToken(values, positionals),
});

export const edition = command({
  summary: `Management data: declare the edition (${EDITIONS.join(', ')})`,
  usage: 'modmirror edition set NAME [--data DIR] [--json]',
  arguments: [
    [
      'NAME',
      `one of ${EDITIONS.join(', ')} (default: self-hosted); the site-admin endpoints answer on self-hosted only; free allows one run task integration per organization, on at most ten workspaces`,
    ],
  ],
  options: EDITION_OPTIONS,
  positionals: { names: ['set', 'NAME'], required: 2 },
  run: async (values, positionals) => (await import('../manage.js')).runEdition(values, positionals),
});

export const runTask = command({
  summary: "Management data: record a run task's result (creates the run and stage if needed); prints the ids",
  usage: `modmirror run-task record --run RUN_ID --task NAME --status STATUS [--org ORG --workspace NAME] [--stage post_plan]
                         [--stage-status STATUS] [--message TEXT] [--url URL] [--task-url URL] [--enforcement mandatory|advisory]
                         [--speculative] [--data DIR] [--json]`,
  options: RUN_TASK_OPTIONS,
  notes: `The stage's status follows its results unless --stage-status says otherwise. Prints the ids as JSON.`,
  positionals: { names: ['record'], required: 1 },
  run: async (values, positionals) => (await import('../manage.js')).runRunTask(values, positionals),
});
