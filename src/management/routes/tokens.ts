// Terraform Enterprise's organization token revocation:
// DELETE /organizations/:org/authentication-token. Owners and site
// administrators may; for anyone else the organization does not exist (404).
// A disabled organization has no permissions left, its owners' included
// (spec 3.3): only a site administrator may still revoke its token. A private
// registry refuses the token from the next request on.

import type { Principal } from '../auth.js';
import { notFound } from '../jsonapi.js';
import type { Store } from '../store.js';

export async function revokeOrganizationToken(store: Store, principal: Principal, organization: string): Promise<{ status: number }> {
  const org = store.read().organizations.find((o) => o.name === organization);
  const allowed = principal.kind === 'user' && (principal.user.isSiteAdmin || (org !== undefined && !org.isDisabled && org.owners.includes(principal.user.id)));
  if (!org || !allowed) throw notFound();
  const removed = await store.mutate(['tokens'], (data) => {
    const before = data.tokens.length;
    data.tokens = data.tokens.filter((t) => !(t.kind === 'organization' && t.subject === organization));
    return before - data.tokens.length;
  });
  if (removed === 0) throw notFound();
  return { status: 204 };
}
