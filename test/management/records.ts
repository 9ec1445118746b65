// Records as the data folder's files hold them, for tests that write a data
// folder (or a Data) themselves. Pure, so the unit tier can import it
// without the server harness in helpers.ts.

import type { Organization } from '../../src/management/types.js';

/** An organization as organizations.json holds it, with every setting at its default. */
export const organizationRecord = (name: string, extra: Partial<Organization> = {}): Organization => ({
  name,
  externalId: `org-${name}`,
  email: '',
  accessBetaTools: false,
  isDisabled: false,
  applyTimeout: null,
  planTimeout: null,
  terraformWorkerSudoEnabled: false,
  globalModuleSharing: false,
  globalProviderSharing: false,
  ssoEnabled: false,
  workspaceLimit: null,
  owners: [],
  moduleConsumers: [],
  providerConsumers: [],
  createdAt: '2024-01-01T00:00:00.000Z',
  ...extra,
});
