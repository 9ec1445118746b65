// A configuration's `.terraform.lock.hcl`: the exact provider versions
// `terraform init` will install, and the hashes it will accept for them
// (h1: per platform installed, zh: for every platform of the SHA256SUMS).
// sync mirrors those versions and refuses a package matching none of them.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MirrorError } from '../errors.js';
import { HclSyntaxError, parseHcl, positionOf } from '../extract/hcl.js';
import { providerKey } from '../protocol/providers.js';
import { providerFromSource } from '../protocol/provider-address.js';

export interface LockedProvider {
  version: string;
  hashes: string[];
}

/** Locked providers by `HOST/NS/TYPE`; empty when the folder has no lock file. */
export function readLockFile(dir: string): Map<string, LockedProvider> {
  const file = join(dir, '.terraform.lock.hcl');
  const locked = new Map<string, LockedProvider>();
  if (!existsSync(file)) return locked;
  const source = readFileSync(file, 'utf8');
  const bad = (offset: number, message: string) => {
    const { line } = positionOf(source, offset);
    return new MirrorError('USAGE', `${file}:${line}: ${message}`, { hint: 'Run terraform init (or terraform providers lock) to write the lock file again.' });
  };
  let body;
  try {
    body = parseHcl(source);
  } catch (error) {
    if (error instanceof HclSyntaxError)
      throw new MirrorError('USAGE', `${file}:${error.line}:${error.column}: ${error.message}`, { hint: 'Run terraform init to write the lock file again.' });
    throw error;
  }
  for (const block of body.blocks) {
    if (block.type !== 'provider') continue;
    const at = block.body.attributes[0]?.expr.start ?? 0;
    const address = block.labels.length === 1 ? providerFromSource(block.labels[0]!, '') : undefined;
    if (address === undefined || block.labels[0]!.split('/').length !== 3)
      throw bad(at, `provider block "${block.labels.join(' ')}": expected one label HOST/NAMESPACE/TYPE`);
    const version = block.body.attributes.find((a) => a.name === 'version');
    if (typeof version?.expr.value !== 'string') throw bad(version?.expr.start ?? at, `provider "${block.labels[0]}": version: expected a version string`);
    const hashes = block.body.attributes.find((a) => a.name === 'hashes');
    const list = hashes?.expr.value ?? [];
    if (!Array.isArray(list) || !list.every((h) => typeof h === 'string'))
      throw bad(hashes!.expr.start, `provider "${block.labels[0]}": hashes: expected a list of strings`);
    locked.set(providerKey(address), { version: version.expr.value, hashes: list });
  }
  return locked;
}
