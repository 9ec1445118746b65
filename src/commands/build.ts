import { relative } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { build, type BuildResult } from '../builder/index.js';
import { baseUrlFlag, resolveConfig } from '../config/index.js';
import { plural, printJson, usageError } from './args.js';
import { provenanceSigningKey } from './key-flags.js';
import { mirrorFlag } from './mirror-flag.js';
import { terminalProgress } from './progress.js';
import type { BuildFlags } from './options/build.js';
import { addressKey, isValidName } from '../protocol/paths.js';
import { validVersion } from '../version-order.js';

/**
 * A build's live data is small (about 0.3 KB a version), but it makes garbage
 * fast, and V8 lets the heap grow to up to four times what survived its last
 * full collection: at 400,000 versions that was a gigabyte of garbage. Growing
 * the heap by half at most keeps the peak nearer the live data, at the cost
 * of collecting more often.
 */
const BUILD_HEAP_GROWTH = '--heap-growing-percent=50';

export async function runBuild(values: BuildFlags): Promise<number> {
  setFlagsFromString(BUILD_HEAP_GROWTH);
  const json = values.json === true;
  const config = resolveConfig({
    config: values.config,
    modules: values.modules,
    out: mirrorFlag(values, 'build', 'out'),
    baseUrl: baseUrlFlag(values['base-url'], 'build'),
  });
  // Read and unlocked before anything is built: a wrong passphrase fails at once.
  const signer = await provenanceSigningKey(values, 'build', config);
  const progress = terminalProgress(!json);
  const result = await build(config, {
    clean: values.clean === true,
    strict: values.strict === true,
    prune: values.prune === true,
    replace: replaceFlags(values.replace),
    signer,
    onProgress: progress
      ? (done, total, current) => {
          progress(`[${done}/${total}] ${addressKey(current.address)} ${current.version}`);
          if (done === total) progress.done();
        }
      : undefined,
  });
  if (json) printJson(summaryOf(result));
  else printHuman(result);
  return result.errors.length > 0 ? 1 : 0;
}

/** `--replace NS/NAME/PROVIDER@VERSION`, each checked, in the build's own normal form of the version. */
function replaceFlags(flags: string[] | undefined): string[] {
  return (flags ?? []).map((flag) => {
    const at = flag.lastIndexOf('@');
    const parts = flag.slice(0, at).split('/');
    const version = at > 0 ? validVersion(flag.slice(at + 1)) : null;
    if (parts.length !== 3 || !parts.every(isValidName) || version === null) {
      throw usageError('build', `--replace "${flag}" is not NAMESPACE/NAME/PROVIDER@VERSION (e.g. acme/network/aws@2.3.0).`);
    }
    return `${parts.join('/')}@${version}`;
  });
}

function summaryOf(r: BuildResult) {
  return {
    out: r.outDir,
    modules: r.modules,
    versions: r.versions,
    archives: r.archives,
    providerPackages: r.providerPackages,
    providerHashing: r.providerHashing,
    cached: r.cached,
    upToDate: r.upToDate,
    warnings: r.warnings,
    errors: r.errors.map((e) => ({ code: e.code, message: e.message })),
    partial: r.partial,
    seconds: Number(r.seconds.toFixed(3)),
  };
}

function printHuman(r: BuildResult): void {
  for (const w of r.warnings) console.error(`warning: ${w}`);
  for (const p of r.partial) {
    console.error(
      `warning: ${p.module} ${p.version} (${p.source}) is mirrored with the documentation that could be read; not read:\n  ${p.problems.join('\n  ')}`,
    );
  }
  for (const e of r.errors) console.error(`error: ${e.message}`);
  const out = relative(process.cwd(), r.outDir) || '.';
  const providers = r.providerPackages > 0 ? `, ${plural(r.providerPackages, 'provider package')}` : '';
  const counts = (modules: number, versions: number) => `${plural(modules, 'module')}, ${plural(versions, 'version')}`;
  const held = counts(r.modules, r.versions);
  if (r.upToDate) console.log(`${out}/ is up to date: ${held}${providers} (checked in ${r.seconds.toFixed(2)} s).`);
  else {
    // What this run built; the mirror also holds the published versions it kept (a failed one's, those the sources no longer give).
    const cache = r.cached > 0 ? ` (${r.cached} from the cache)` : '';
    const kept = r.built.modules === r.modules && r.built.versions === r.versions ? '' : `; with the published versions it keeps, it holds ${held}`;
    console.log(`Built ${counts(r.built.modules, r.built.versions)}${cache}${providers} into ${out}/ in ${r.seconds.toFixed(2)} s${kept}.`);
  }
  if (r.partial.length > 0)
    console.error(`${plural(r.partial.length, 'version')} mirrored with partial documentation; build --strict leaves them out and fails.`);
  if (r.errors.length > 0)
    console.error(`${plural(r.errors.length, 'version')} failed: a new one is left out, a published one keeps what it published; see the errors above.`);
}
