// How provider packages the cache fetched become part of the mirror: the
// mirror's network mirror is made from provider folders by a build, so the
// cache's folder is taken in by one, through the mirror's one write (the
// lock, staging, the ledger, verification, the swap). It builds no module
// source: the versions the mirror holds are kept as published, and a
// provider version already published keeps its bytes.

import { build } from '../build/index.js';
import type { ResolvedConfig } from '../config/index.js';
import { MirrorError } from '../errors.js';

export function takeInProviders(config: ResolvedConfig, into: string): () => Promise<void> {
  return async () => {
    const result = await build({ ...config, sources: [], providerFolders: [...config.providerFolders, { kind: 'mirror', dir: into }] });
    if (result.errors.length > 0)
      throw new MirrorError(
        'BAD_GATEWAY',
        `The provider packages fetched from the upstream cannot be kept in the mirror: ${result.errors.map((e) => e.message).join('; ')}`,
      );
  };
}
