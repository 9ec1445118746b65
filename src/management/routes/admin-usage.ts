// Site administrators' usage report (docs/operations.md): who downloaded
// which module version, as `modmirror usage` prints it, one JSON:API
// resource per module version and caller. The server that runs the API
// gives the report (it knows the data folder's usage and the mirror's
// deprecations); the API reads it afresh on every request.

import { filterProblem, type UsageEntry, type UsageFilter } from '../../usage/report.js';
import { badRequest, notFound, pageLinksAndMeta, paginate, type Reply } from '../jsonapi.js';

/** The report for a filter, as the server reads it now. */
export type UsageHook = (filter: UsageFilter) => UsageEntry[];

const PATH = '/api/v2/admin/usage';

/** GET /api/v2/admin/usage?filter[since]=DAY&filter[module]=NS/NAME/PROVIDER&filter[deprecated]=true */
export function usageReport(query: URLSearchParams, usage: UsageHook | undefined): Reply {
  if (!usage) throw notFound();
  const deprecated = query.get('filter[deprecated]');
  if (deprecated !== null && deprecated !== '' && deprecated !== 'true' && deprecated !== 'false') {
    throw badRequest(`filter[deprecated] must be true or false, got "${deprecated}".`);
  }
  const filter: UsageFilter = {
    ...(query.get('filter[since]') ? { since: query.get('filter[since]')! } : {}),
    ...(query.get('filter[module]') ? { module: query.get('filter[module]')! } : {}),
    deprecated: deprecated === 'true',
  };
  const problem = filterProblem(filter);
  // `since must be ...` as `filter[since] must be ...`: the parameter as the caller sent it.
  if (problem) throw badRequest(`filter[${problem.replace(/^(\w+)/, '$1]')}.`);
  const page = paginate(usage(filter), query, 100);
  return { status: 200, document: { data: page.items.map(resource), ...pageLinksAndMeta(page, PATH, query) } };
}

function resource(entry: UsageEntry) {
  const who = entry.organization !== undefined ? `${entry.organization}/${entry.team ?? ''}` : `~${entry.user ?? ''}`;
  return {
    type: 'module-version-usages',
    id: `${entry.module}@${entry.version}@${who}`,
    attributes: {
      module: entry.module,
      version: entry.version,
      organization: entry.organization ?? null,
      team: entry.team ?? null,
      user: entry.user ?? null,
      downloads: entry.downloads,
      'first-day': entry.firstDay,
      'last-day': entry.lastDay,
      deprecation: entry.deprecation ?? null,
    },
  };
}
