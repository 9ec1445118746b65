// What the race tests share (test/publish/races.test.ts for a mirror in a
// folder, test/s3/races.test.ts for one in a bucket): module sources that
// tell every writer from every other, a publish's arguments, one-line
// accounts of how a process ended, and the seeded generator the kill delays
// come from, so a failed run comes back with its seed.

import { writeFiles, type CliResult, type Ended } from './helpers.js';

/** A module version's source in `folder`: one small main.tf whose output (`value`) tells it from every other. */
export function moduleSource(folder: string, value: string): string {
  writeFiles(folder, { 'main.tf': `variable "name" {\n  type = string\n}\n\noutput "v" {\n  value = "${value} \${var.name}"\n}\n` });
  return folder;
}

/** `modmirror publish` of `src` as `module` (NS/NAME/PROVIDER) `version` into `mirror`, with --json and `extra`. */
export function publishArgs(module: string, version: string, src: string, mirror: string, extra: string[] = []): string[] {
  const [namespace, name, provider] = module.split('/') as [string, string, string];
  return [
    'publish',
    '--source',
    src,
    '--namespace',
    namespace,
    '--name',
    name,
    '--provider',
    provider,
    '--version',
    version,
    '--mirror',
    mirror,
    '--json',
    ...extra,
  ];
}

/** The first lines of what a process printed to stderr, for a problem line. */
export const said = (r: CliResult) => r.stderr.trim().split('\n').slice(0, 3).join(' | ') || '(nothing on stderr)';

/** How a process ended, and after how long when known: `exit 0 after 310 ms`, `SIGKILL after 120 ms`. */
export const outcome = (r: CliResult & Partial<Pick<Ended, 'signal' | 'ms'>>) =>
  `${r.signal ? r.signal : `exit ${r.code}`}${r.ms === undefined ? '' : ` after ${r.ms} ms`}`;

/** A seeded generator (mulberry32) of numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The run's generator: seeded from RACES_SEED when set (to replay a run), else at random; the seed is logged under `label`. */
export function raceRandom(label: string): { seed: number; next: () => number } {
  const seed = Number(process.env['RACES_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`${label}: RACES_SEED=${seed}`);
  return { seed, next: seededRandom(seed) };
}
