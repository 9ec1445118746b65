// What every write of a mirror ends with, from every module's record: the
// registry's indexes and manifest (emit/), the browse page (browse/) and the
// static hosts' `_headers` (hosting/), all from the records sorted once.
// build and publish both call it; it sits above the three so none of them
// imports another.

import { emitBrowseSite } from '../browse/index.js';
import { emitIndexes, type IndexOptions } from './index.js';
import type { Staging } from '../mirror/staging.js';
import { emitHeadersFile } from '../hosting/headers.js';
import { sortRecords, type ModuleRecord } from '../mirror/manifest.js';
import { providersIndexOf } from '../providers/emit.js';
import { DEFAULT_PROVIDERS_PATH, PROVIDERS_INDEX_FILE } from '../protocol/providers.js';

export async function writeMirrorIndexes(staging: Staging, records: ModuleRecord[], options: IndexOptions & { imageHosts: string[] }): Promise<void> {
  const sorted = sortRecords(records);
  const providers = providersIndexOf(options.providers?.path ?? DEFAULT_PROVIDERS_PATH, options.providers?.entries ?? {});
  await emitIndexes(staging, sorted, options);
  // Compact, like the search index: the server and the browse page read it rather than the manifest.
  await staging.write(PROVIDERS_INDEX_FILE, `${JSON.stringify(providers)}\n`);
  await emitBrowseSite(staging, sorted, options);
  await emitHeadersFile(staging, sorted, options.baseUrl, providers);
}
