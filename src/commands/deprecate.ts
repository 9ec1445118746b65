import { relative } from 'node:path';
import { resolveMirrorConfig } from '../config/index.js';
import { setDeprecation } from '../publish/deprecate.js';
import { checkDeprecationLink } from '../mirror/deprecations.js';
import { isValidName } from '../protocol/paths.js';
import { validVersion } from '../version-order.js';
import { printJson, stringFlag, usageError, type Values } from './args.js';
import { mirrorFlag, requireMirror } from './mirror-flag.js';
import { describeBucket, isBucketUrl } from '../bucket/location.js';
import { bucketLocation, refuseBucketFlags } from './bucket-flags.js';

export async function runDeprecate(values: Values, positionals: string[]): Promise<number> {
  const [address = '', version = ''] = positionals;
  const parts = address.split('/');
  if (parts.length !== 3 || !parts.every(isValidName)) throw usageError('deprecate', `"${address}" is not a module address: give NAMESPACE/NAME/PROVIDER.`);
  if (validVersion(version) === null) throw usageError('deprecate', `"${version}" is not a version: give it as the mirror lists it, such as 1.2.0.`);
  const undo = values['undo'] === true;
  const reason = stringFlag(values, 'reason');
  const link = stringFlag(values, 'link');
  if (undo && (reason !== undefined || link !== undefined)) throw usageError('deprecate', '--undo takes no --reason or --link.');
  if (!undo && (reason === undefined || reason.trim() === ''))
    throw usageError('deprecate', 'Say why with --reason TEXT (or pass --undo to lift a deprecation).');
  const linkProblem = link === undefined ? undefined : checkDeprecationLink(link);
  if (linkProblem) throw usageError('deprecate', `--link ${linkProblem}, got "${link}".`);
  const out = mirrorFlag(values, 'deprecate', 'out');
  const [namespace, name, provider] = parts as [string, string, string];
  const module = { namespace, name, provider };
  const deprecation = undo ? null : { reason: reason!, link: link ?? null };
  let result;
  let where: string;
  let mirror: string;
  if (isBucketUrl(out)) {
    const location = bucketLocation(out, values, '--mirror');
    const { openBucket } = await import('../bucket/store.js');
    const { deprecateInBucket } = await import('../bucket/deprecate.js');
    const bucket = openBucket(location);
    try {
      const { imageHosts } = resolveMirrorConfig({ config: stringFlag(values, 'config') });
      result = await deprecateInBucket(bucket, module, version, deprecation, { imageHosts });
    } finally {
      bucket.close();
    }
    where = describeBucket(location);
    mirror = where;
  } else {
    refuseBucketFlags(values, 'deprecate --mirror');
    const { outDir } = resolveMirrorConfig({ out, config: stringFlag(values, 'config') });
    await requireMirror(outDir, 'deprecate');
    result = await setDeprecation(outDir, module, version, deprecation);
    where = `${relative(process.cwd(), outDir) || '.'}/`;
    mirror = outDir;
  }
  if (values['json'] === true) {
    printJson({ mirror, module: result.module, version: result.version, deprecation: result.deprecation, changed: result.changed });
    return 0;
  }
  const what = undo ? 'no longer deprecated' : `deprecated: ${reason}`;
  console.log(`${result.module} ${result.version} ${what}${result.changed ? '' : ' (already so; nothing changed)'} in ${where}`);
  return 0;
}
