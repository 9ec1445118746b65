// The management API's data folder for the serve benchmark: the sample one
// (data/) grown to 200 organizations, for the /api/v2 rows.

import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRng } from '../corpus/random.mjs';
import { SEED } from './settings.mjs';

const SAMPLE_DATA = fileURLToPath(new URL('../../data', import.meta.url));
const ORGANIZATIONS = 200;
// Tokens of the sample data folder: a site administrator (admin) and an ordinary user (alice).
export const ADMIN_TOKEN = 'mm.sample-admin-token';
export const USER_TOKEN = 'mm.sample-user-token';

/** A copy of the sample data folder with organizations appended (shaped as the sample's) up to `total`. */
export async function prepareDataDir(dir, total = ORGANIZATIONS) {
  await cp(SAMPLE_DATA, dir, { recursive: true });
  const file = join(dir, 'organizations.json');
  const organizations = JSON.parse(await readFile(file, 'utf8'));
  const users = JSON.parse(await readFile(join(dir, 'users.json'), 'utf8'));
  const r = createRng(SEED + 7);
  const first = organizations.length;
  for (let i = first; i < total; i++) {
    const name = `bench-org-${String(i).padStart(4, '0')}`;
    const consumers = i > first && r.chance(0.2) ? [organizations[r.int(first, i - 1)].name] : [];
    const globalModuleSharing = consumers.length === 0 && r.chance(0.1);
    const globalProviderSharing = consumers.length === 0 && r.chance(0.05);
    organizations.push({
      name,
      externalId: `org-bench${String(i).padStart(6, '0')}`,
      email: `${name}@example.com`,
      accessBetaTools: r.chance(0.1),
      isDisabled: r.chance(0.05),
      applyTimeout: r.chance(0.3) ? r.pick(['24h', '12h', '90m']) : null,
      planTimeout: r.chance(0.3) ? r.pick(['2h', '1h', '45m']) : null,
      terraformWorkerSudoEnabled: false,
      globalModuleSharing,
      globalProviderSharing,
      ssoEnabled: r.chance(0.2),
      workspaceLimit: r.chance(0.5) ? null : r.pick([10, 25, 100]),
      owners: r.chance(0.5) ? [r.pick(users).id] : [],
      moduleConsumers: consumers,
      providerConsumers: r.chance(0.5) ? consumers : [],
      createdAt: new Date(Date.UTC(2026, 10, 1, 9) + i * 60_000).toISOString(),
    });
  }
  await writeFile(file, `${JSON.stringify(organizations, null, 2)}\n`);
  return { organizations: organizations.length, disabled: organizations.filter((o) => o.isDisabled).length };
}
