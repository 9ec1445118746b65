import { relative } from 'node:path';
import { completenessProblems } from '../verify/complete.js';
import { resolveMirrorConfig } from '../config/index.js';
import { hasLeftChanges, homeOf, putBackSetAside } from '../mirror/home.js';
import { withMirrorRead } from '../mirror/transaction.js';
import { readManifest } from '../mirror/manifest.js';
import { signingKeyWarnings } from '../providers/verify.js';
import { verifyMirror } from '../verify/index.js';
import { refreshModules } from '../publish/refresh.js';
import { printJson, stringFlag, type Values } from './args.js';
import { mirrorArgument, requireMirror } from './mirror-flag.js';
import { existsSync } from 'node:fs';
import { describeBucket, isBucketUrl } from '../bucket/location.js';
import { MirrorError } from '../errors.js';
import { bucketLocation, refuseBucketFlags } from './bucket-flags.js';

export async function runVerify(values: Values, positionals: string[] = []): Promise<number> {
  const given = mirrorArgument(values, 'verify', positionals[0], `modmirror verify ${positionals[0]}`, `modmirror verify --mirror ${positionals[0]}`);
  if (isBucketUrl(given)) return verifyInBucket(values, given);
  refuseBucketFlags(values, 'verify --mirror');
  const config = resolveMirrorConfig({ out: given, config: stringFlag(values, 'config') });
  const dir = homeOf(config.outDir);
  // A reader's half of always finding a mirror: a mirror set aside by a writer that died mid-swap is put back first,
  // and a change a writer died applying is finished (under the lock, as the next writer would).
  await putBackSetAside(dir);
  // A folder that is there is judged (no manifest is a problem found, exit 1); a path that is not, is a usage error.
  if (!existsSync(dir)) await requireMirror(dir, 'verify');
  if (hasLeftChanges(dir)) await withMirrorRead(dir, async () => {});
  const repaired = values['repair'] === true ? (await refreshModules('all', { outDir: dir, imageHosts: config.imageHosts })).changed : undefined;
  const problems = await verifyMirror(dir);
  const manifest = values['complete'] === true && problems.length === 0 ? readManifest(dir) : undefined;
  if (manifest) problems.push(...(await completenessProblems(dir, manifest, config.platforms)));
  const current = problems.length === 0 ? readManifest(dir) : undefined;
  const warnings = current ? await signingKeyWarnings(dir, current) : [];
  if (values['json'] === true)
    printJson({ dir, ok: problems.length === 0, problems, ...(warnings.length > 0 ? { warnings } : {}), ...(repaired ? { repaired } : {}) });
  else {
    const shown = relative(process.cwd(), dir) || '.';
    if (repaired) console.log(repairedLine(repaired, `${shown}/`));
    for (const w of warnings) console.error(`warning: ${shown}/${w}`);
    for (const p of problems) console.error(`${shown}/${p.path}: ${p.message}`);
    console.log(problems.length === 0 ? `${shown}/ is consistent.` : `${problems.length} problem(s) in ${shown}/.`);
  }
  return problems.length === 0 ? 0 : 1;
}

async function verifyInBucket(values: Values, url: string): Promise<number> {
  if (values['complete'] === true)
    throw new MirrorError('USAGE', '--complete reads the mirror as a folder: verify the folder you pushed, or sync the bucket to one first.');
  const location = bucketLocation(url, values, '--mirror');
  const { openBucket } = await import('../bucket/store.js');
  const { verifyBucket } = await import('../bucket/verify.js');
  const bucket = openBucket(location);
  let problems;
  let repaired: string[] | undefined;
  try {
    if (values['repair'] === true) {
      const { repairBucket } = await import('../bucket/repair.js');
      const { imageHosts } = resolveMirrorConfig({ config: stringFlag(values, 'config') });
      repaired = (await repairBucket(bucket, { imageHosts })).uploaded;
    }
    problems = await verifyBucket(bucket);
  } finally {
    bucket.close();
  }
  const shown = describeBucket(location);
  if (values['json'] === true) printJson({ dir: shown, ok: problems.length === 0, problems, ...(repaired ? { repaired } : {}) });
  else {
    if (repaired) console.log(repairedLine(repaired, shown));
    for (const p of problems) console.error(`${shown}${p.path}: ${p.message}`);
    console.log(problems.length === 0 ? `${shown} is consistent.` : `${problems.length} problem(s) in ${shown}.`);
  }
  return problems.length === 0 ? 0 : 1;
}

function repairedLine(files: string[], shown: string): string {
  return files.length === 0
    ? `Repaired nothing: every derived document of ${shown} agrees with its manifest.`
    : `Repaired ${shown}: wrote ${files.length} derived documents again from its manifest.`;
}
