import { relative } from 'node:path';
import { resolveMirrorConfig } from '../config.js';
import { verifyMirror } from '../verify.js';
import type { Values } from './args.js';

export async function runVerify(values: Values, positionals: string[] = []): Promise<number> {
  const dir = resolveMirrorConfig({ out: positionals[0] }).outDir;
  const problems = await verifyMirror(dir);
  if (values['json'] === true) console.log(JSON.stringify({ dir, ok: problems.length === 0, problems }));
  else {
    const shown = relative(process.cwd(), dir) || '.';
    for (const p of problems) console.error(`${shown}/${p.path}: ${p.message}`);
    console.log(problems.length === 0 ? `${shown}/ is consistent.` : `${problems.length} problem(s) in ${shown}/.`);
  }
  return problems.length === 0 ? 0 : 1;
}
