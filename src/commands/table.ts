// The command table: each command's declaration (its flags with their help,
// its arguments, how to load it), in the order `modmirror --help` lists them.
// The declarations load nothing of the commands themselves, so the CLI starts fast.

import type { Command } from './args.js';
import { build } from './options/build.js';
import { bundle } from './options/bundle.js';
import { cache } from './options/cache.js';
import { deprecate } from './options/deprecate.js';
import { dev } from './options/dev.js';
import { hosting } from './options/hosting.js';
import { key, providerKey } from './options/key.js';
import { edition, org, runTask, team, token, user } from './options/manage.js';
import { publish } from './options/publish.js';
import { push } from './options/push.js';
import { serve } from './options/serve.js';
import { signingKey } from './options/signing-key.js';
import { sync } from './options/sync.js';
import { unbundle } from './options/unbundle.js';
import { usage } from './options/usage.js';
import { verify } from './options/verify.js';

export const COMMANDS: Readonly<Record<string, Command>> = {
  build,
  serve,
  dev,
  deprecate,
  usage,
  cache,
  'signing-key': signingKey,
  key,
  'provider-key': providerKey,
  publish,
  push,
  user,
  org,
  team,
  token,
  edition,
  'run-task': runTask,
  verify,
  hosting,
  bundle,
  unbundle,
  sync,
};
