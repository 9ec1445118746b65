// What every write of a mirror ends with, from every module's record: the
// registry's indexes and manifest (emit/), the browse page (browse/) and the
// static hosts' `_headers` (hosting/), all from the records sorted once.
// build and publish both call it; it sits above the three so none of them
// imports another.

import { emitBrowseSite } from './browse/index.js';
import { emitIndexes, type IndexOptions } from './emit/index.js';
import type { Staging } from './emit/staging.js';
import { emitHeadersFile } from './hosting/headers.js';
import { sortRecords, type ModuleRecord } from './manifest.js';

export async function writeMirrorIndexes(staging: Staging, records: ModuleRecord[], options: IndexOptions & { imageHosts: string[] }): Promise<void> {
  const sorted = sortRecords(records);
  await emitIndexes(staging, sorted, options);
  await emitBrowseSite(staging, sorted, options);
  await emitHeadersFile(staging, sorted, options.baseUrl);
}
