import { relative } from 'node:path';
import { completenessProblems } from '../verify/complete.js';
import { resolveMirrorConfig } from '../config/index.js';
import { homeOf, putBackSetAside } from '../mirror/home.js';
import { readManifest } from '../mirror/manifest.js';
import { signingKeyWarnings } from '../providers/verify.js';
import { verifyMirror } from '../verify/index.js';
import { stringFlag, type Values } from './args.js';

export async function runVerify(values: Values, positionals: string[] = []): Promise<number> {
  const config = resolveMirrorConfig({ out: positionals[0], config: stringFlag(values, 'config') });
  const dir = homeOf(config.outDir);
  // A reader's half of always finding a mirror: a mirror set aside by a writer that died mid-swap is put back first.
  await putBackSetAside(dir);
  const problems = await verifyMirror(dir);
  const manifest = values['complete'] === true && problems.length === 0 ? readManifest(dir) : undefined;
  if (manifest) problems.push(...(await completenessProblems(dir, manifest, config.platforms)));
  const current = problems.length === 0 ? readManifest(dir) : undefined;
  const warnings = current ? await signingKeyWarnings(dir, current) : [];
  if (values['json'] === true) console.log(JSON.stringify({ dir, ok: problems.length === 0, problems, ...(warnings.length > 0 ? { warnings } : {}) }));
  else {
    const shown = relative(process.cwd(), dir) || '.';
    for (const w of warnings) console.error(`warning: ${shown}/${w}`);
    for (const p of problems) console.error(`${shown}/${p.path}: ${p.message}`);
    console.log(problems.length === 0 ? `${shown}/ is consistent.` : `${problems.length} problem(s) in ${shown}/.`);
  }
  return problems.length === 0 ? 0 : 1;
}
