// Prints the markdown table of a benchmark run, from the file
// `npm run bench -- --json FILE` wrote, for bench/README.md:
//
//   node bench/table.mjs FILE > table.md
//
// The machine and the date come from the file, so the table says where and
// when it was measured.

import { readFileSync } from 'node:fs';
import { formatNumber } from './util.mjs';

const file = process.argv[2];
if (file === undefined || process.argv.length > 3) {
  console.error('Usage: node bench/table.mjs FILE   (FILE: written by npm run bench -- --json FILE)');
  process.exit(2);
}
const run = JSON.parse(readFileSync(file, 'utf8'));
if (!Array.isArray(run.rows) || typeof run.machine !== 'object') {
  console.error(`${file} is not the output of npm run bench -- --json FILE (no rows or machine).`);
  process.exit(1);
}

/** A cell: `|` would end it, a line break would end the row. */
const cell = (text) =>
  String(text)
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ');
const { cpu, cores, node, platform } = run.machine;
const day = typeof run.date === 'string' ? run.date.slice(0, 10) : 'unknown date';

const lines = [
  `Measured ${day} on ${cpu}, ${cores} cores, Node ${node.replace(/^v/, '')}, ${platform}${run.quick ? ' (quick run)' : ''}; ${Math.round(run.seconds)} s in all. Medians.`,
  '',
  '| benchmark | measurement | modmirror | baseline | ratio | target |',
  '|---|---|---:|---:|---:|---|',
];
for (const r of run.rows) {
  const ratio = typeof r.ratio === 'number' ? `${r.ratio.toFixed(2)}×` : '—';
  const target = r.target ? `${r.target}${r.pass === undefined ? '' : r.pass ? ' (ok)' : ' (missed)'}` : '(info)';
  lines.push(
    `| ${[r.benchmark ?? '', r.name.trim(), formatNumber(r.modmirror, r.unit), formatNumber(r.baseline, r.unit), ratio, target].map(cell).join(' | ')} |`,
  );
}
console.log(lines.join('\n'));
