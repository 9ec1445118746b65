import { relative, resolve } from 'node:path';
import type { Values } from '../cli.js';
import { MirrorError } from '../errors.js';
import { verifyMirror } from '../verify.js';

export async function runVerify(values: Values, positionals: string[] = []): Promise<number> {
  if (positionals.length > 1) throw new MirrorError('USAGE', `Unexpected argument "${positionals[1]}".`, { hint: 'Run modmirror verify --help.' });
  const dir = resolve(positionals[0] ?? 'dist');
  const problems = await verifyMirror(dir);
  if (values['json'] === true) console.log(JSON.stringify({ dir, ok: problems.length === 0, problems }));
  else {
    const shown = relative(process.cwd(), dir) || '.';
    for (const p of problems) console.error(`${shown}/${p.path}: ${p.message}`);
    console.log(problems.length === 0 ? `${shown}/ is consistent.` : `${problems.length} problem(s) in ${shown}/.`);
  }
  return problems.length === 0 ? 0 : 1;
}
