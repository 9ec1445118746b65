import { relative } from 'node:path';
import { createBundle } from '../bundle/create.js';
import { resolveMirrorConfig } from '../config/index.js';
import { printJson, usageError } from './args.js';
import { signingKeyFlag } from './key-flags.js';
import { mirrorFlag, requireMirror } from './mirror-flag.js';
import { terminalProgress } from './progress.js';
import type { BundleFlags } from './options/bundle.js';

export async function runBundle(values: BundleFlags): Promise<number> {
  const out = values.out;
  if (out === undefined) throw usageError('bundle', 'Name the bundle to write with --out FILE.tar.gz.');
  const dir = resolveMirrorConfig({ out: mirrorFlag(values, 'bundle', 'dir') }).outDir;
  await requireMirror(dir, 'bundle');
  // The key is read and unlocked before anything is written: a bundle is signed as it is made, or not made.
  const signer = await signingKeyFlag(values, 'bundle');
  const progress = terminalProgress(values.json !== true);
  const result = await createBundle({ dir, out, since: values.since, ...(signer ? { signer } : {}), ...(progress ? { onProgress: progress } : {}) });
  progress?.done();
  if (values.json === true) {
    printJson({ mirror: dir, ...result });
    return 0;
  }
  const providers = result.providerPackages > 0 ? `, ${result.providerPackages} provider package(s)` : '';
  const what =
    result.skipped > 0
      ? `${result.versions} new or changed version(s)${providers}; ${result.skipped} archive(s) left out that the base has`
      : `${result.versions} version(s)${providers}`;
  const outside = result.derived > 0 ? `; ${result.derived} file(s) the receiver rebuilds, checked by unbundle` : '';
  console.log(`Wrote ${relative(process.cwd(), result.out) || result.out}: ${result.files} files, ${what}${outside}, ${formatBytes(result.bytes)}.`);
  // Printed so the copy on the other side can be checked before unbundling.
  console.log(`sha256 ${result.sha256}`);
  if (result.signature) console.log(`Signed by key ${result.signature.keyId}: ${relative(process.cwd(), result.signature.file) || result.signature.file}`);
  return 0;
}

function formatBytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
