import { isBucketUrl } from '../bucket/location.js';
import { openBucket } from '../bucket/store.js';
import { resolveMirrorConfig } from '../config/index.js';
import { homeOf } from '../mirror/home.js';
import { terminalProgress } from './progress.js';
import { printJson, usageError } from './args.js';
import { provenanceSigningKey } from './key-flags.js';
import { mirrorArgument, requireMirror } from './mirror-flag.js';
import { bucketLocation } from './bucket-flags.js';
import type { PushFlags } from './options/push.js';

export async function runPush(values: PushFlags, positionals: string[]): Promise<number> {
  // `push DIR s3://...` is the form before --mirror: the bucket is then the second argument.
  const [first, second] = positionals as [string, string | undefined];
  const url = second ?? first;
  if (!isBucketUrl(url)) throw usageError('push', `"${url}" is not a bucket URL: modmirror push s3://BUCKET/PREFIX [--mirror DIR].`);
  const dirArg =
    second === undefined ? values.mirror : mirrorArgument(values, 'push', first, `modmirror push ${first} ${url}`, `modmirror push ${url} --mirror ${first}`);
  if (isBucketUrl(dirArg)) throw usageError('push', `push uploads a mirror in a folder to a bucket: --mirror names the folder, the argument the bucket.`);
  const concurrencyFlag = values.concurrency;
  const concurrency = concurrencyFlag === undefined ? 16 : Number(concurrencyFlag);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256)
    throw usageError('push', `--concurrency "${concurrencyFlag}" is not a whole number from 1 to 256.`);
  const location = bucketLocation(url, values, 'The target');
  const config = resolveMirrorConfig({ config: values.config, out: dirArg });
  await requireMirror(config.outDir, 'push');
  // A signed mirror's root, signed again where the bucket gives it a newer generation.
  const signer = await provenanceSigningKey(values, 'push', config);
  const dir = homeOf(config.outDir);
  const json = values.json === true;
  const { push } = await import('../bucket/push.js');
  const bucket = openBucket(location);
  try {
    const result = await push({
      dir,
      bucket,
      cacheDir: config.cacheDir,
      imageHosts: config.imageHosts,
      prune: values.prune === true,
      full: values.full === true,
      dryRun: values['dry-run'] === true,
      terraformGet: values['download-header'] === true,
      concurrency,
      ...(signer ? { signer } : {}),
      progress: terminalProgress(!json),
    });
    if (json) printJson(result);
    else if (result.dryRun) {
      console.log(
        `Would upload ${result.uploaded} objects to ${result.target} (${result.unchanged} unchanged)${result.stale ? `; ${result.stale} objects the mirror no longer has${values.prune === true ? ' would be deleted' : ''}` : ''}:`,
      );
      for (const rel of result.objects ?? []) console.log(`  ${rel}`);
    } else {
      const stale = result.stale > 0 ? ` ${result.stale} objects the mirror no longer has are left in the bucket (--prune deletes them).` : '';
      const deleted = result.deleted > 0 ? `, deleted ${result.deleted}` : '';
      console.log(
        `${result.uploaded === 0 ? `${result.target} is up to date` : `Uploaded ${result.uploaded} objects to ${result.target}`} (${result.unchanged} unchanged${deleted}) in ${result.seconds.toFixed(2)} s.${stale}`,
      );
    }
    return 0;
  } finally {
    bucket.close();
  }
}
