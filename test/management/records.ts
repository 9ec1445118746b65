// Records as the data folder's files hold them, for tests that write a data
// folder (or a Data) themselves. Without the server harness in helpers.ts,
// so the unit tier can import it.

import { newOrganization } from '../../src/management/bootstrap.js';
import type { Organization } from '../../src/management/types.js';

/** An organization as organizations.json holds it, with every setting at its default. */
export const organizationRecord = (name: string, extra: Partial<Organization> = {}): Organization => ({
  ...newOrganization(name, { externalId: `org-${name}`, email: '', owners: [], createdAt: '2024-01-01T00:00:00.000Z' }),
  ...extra,
});
