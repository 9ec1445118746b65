// Spec 3.3: what an organization shares, modules and providers alike. Setting
// consumers turns global sharing off; turning global sharing on clears the
// consumers. The admin API and the `org share` command both change sharing
// here, so the rule holds whichever way it is changed.

import { MirrorError } from '../errors.js';
import { invalid } from './jsonapi.js';
import type { Store } from './store.js';
import type { Data, Organization } from './types.js';

export type Shared = 'module' | 'provider';

const noSuchOrganization = (name: string) =>
  new MirrorError('NOT_FOUND', `No organization named "${name}".`, { hint: 'Create it first with modmirror org create.' });

function organization(data: Data, name: string): Organization {
  const org = data.organizations.find((o) => o.name === name);
  if (!org) throw noSuchOrganization(name);
  return org;
}

/** Sets the organizations `name` shares its modules or providers with; global sharing of that kind goes off. */
export async function setConsumers(store: Store, name: string, kind: Shared, consumers: string[]): Promise<void> {
  await store.mutate(['organizations'], (data) => {
    const org = organization(data, name);
    consumers.forEach((consumer, i) => {
      if (consumer === name) throw invalid(`An organization cannot consume its own ${kind}s.`, `/data/${i}/id`);
      if (data.organizations.some((o) => o.name === consumer)) return;
      const other = data.organizations.find((o) => o.name.toLowerCase() === consumer.toLowerCase());
      const near = other ? ` "${other.name}" does, differing only in case.` : '';
      // The CLI prints the hint; the API's error object carries the detail alone.
      const hint = `Create it first: modmirror org create --name ${consumer} --email ADDR.`;
      throw new MirrorError('INVALID_ATTRIBUTE', `The organization "${consumer}" does not exist.${near}`, { pointer: `/data/${i}/id`, hint });
    });
    const sorted = [...new Set(consumers)].sort();
    if (kind === 'module') {
      org.moduleConsumers = sorted;
      org.globalModuleSharing = false;
    } else {
      org.providerConsumers = sorted;
      org.globalProviderSharing = false;
    }
  });
}

/** The changes to an organization's sharing that follow from `changes` (spec 3.3): global sharing on clears that kind's consumers. */
export function sharingConsequences(org: Organization, changes: Partial<Organization>): void {
  if (changes.globalModuleSharing) org.moduleConsumers = [];
  if (changes.globalProviderSharing) org.providerConsumers = [];
}

/** Turns global sharing of modules or providers on (clearing that kind's consumers) or off. */
export async function setGlobalSharing(store: Store, name: string, kind: Shared, on: boolean): Promise<void> {
  await store.mutate(['organizations'], (data) => {
    const org = organization(data, name);
    const changes: Partial<Organization> = kind === 'module' ? { globalModuleSharing: on } : { globalProviderSharing: on };
    Object.assign(org, changes);
    sharingConsequences(org, changes);
  });
}
