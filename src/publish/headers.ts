// `modmirror hosting headers`: writes a mirror's `_headers`, for static hosts
// that read one (Netlify, Cloudflare Pages), from every module's state,
// through the mirror's one write. A mirror that has the file then keeps it:
// every later write into it rewrites it (emit/indexes.ts).

import { join } from 'node:path';
import { emitHeadersFile, HEADERS_FILE } from '../hosting/headers.js';
import { carriedProviders, sortRecords } from '../mirror/manifest.js';
import { providersIndexOf } from '../providers/emit.js';
import { DEFAULT_PROVIDERS_PATH } from '../protocol/providers.js';
import { withPartialWrite } from './write.js';

export interface HeadersResult {
  /** The file written, in the live mirror. */
  file: string;
  /** The module versions it has a download rule for. */
  versions: number;
  /** False when the mirror's file already said the same. */
  changed: boolean;
}

export function writeHeaders(options: { outDir: string }): Promise<HeadersResult> {
  // One rule per version: every module's state is read. Only the file is written, so the check looks at no module.
  const write = { outDir: options.outDir, what: 'writing _headers', check: () => ({ modules: [] }), modules: () => undefined };
  return withPartialWrite(write, async (tx, mirror) => {
    const records = sortRecords(mirror.records());
    const carried = carriedProviders(mirror.manifest);
    const providers = providersIndexOf(carried?.path ?? DEFAULT_PROVIDERS_PATH, carried?.entries ?? {});
    const changed = await tx.stage(async (staging) => {
      await emitHeadersFile(staging, records, mirror.baseUrl ?? '', providers);
      return (staging.changed ?? []).includes(HEADERS_FILE);
    });
    return { file: join(tx.outDir, HEADERS_FILE), versions: records.reduce((n, r) => n + r.versions.length, 0), changed };
  });
}
