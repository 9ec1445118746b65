// Synthetic corpus for the benchmarks: git repositories named
// terraform-aws-m<N> whose tags are versions, with HCL shaped like real public
// modules (dozens of variables with complex types, dynamic blocks, for
// expressions, submodules, examples, a terraform-docs style README) and
// histories shaped like real ones: from one tag to the next only 1-3 files
// change, so most file contents repeat across tags.
//
// Everything is derived from `seed` with a small PRNG, and commits carry fixed,
// increasing dates and a fixed identity, so the same arguments give the same
// commit ids on every run and every machine.
//
// The parts, in the order a corpus is made: random.mjs (the seeded PRNG),
// words.mjs, hcl.mjs, variables.mjs, resources.mjs and module.mjs (a module's
// model), files.mjs (its files), history.mjs (its tags), git.mjs (the
// repositories).

import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { mapLimited } from '../util.mjs';
import { initRepo, writeWithCommits, writeWithFastImport } from './git.mjs';
import { moduleHistory } from './history.mjs';

export { createRng } from './random.mjs';
export { moduleHistory };

/**
 * Creates `modules` repositories terraform-aws-m<N> (N from 0) in `dir`, each
 * with `versionsPerModule` tags. `method: 'commit'` uses git add/commit/tag
 * instead of fast-import (same commit ids, slower).
 * Returns the absolute repository paths and the total number of tags.
 */
export async function generateCorpus({ dir, modules, versionsPerModule, seed = 1, method = 'fast-import', namePrefix = 'm', concurrency = 4, size }) {
  const root = resolve(dir);
  await mkdir(root, { recursive: true });
  const indexes = Array.from({ length: modules }, (_, i) => i);
  const repos = await mapLimited(indexes, concurrency, async (index) => {
    const history = moduleHistory({ index, versions: versionsPerModule, seed, namePrefix, size });
    const repo = join(root, history.name);
    await initRepo(repo);
    if (method === 'commit') await writeWithCommits(repo, index, history);
    else await writeWithFastImport(repo, index, history);
    return repo;
  });
  return { repos, tags: modules * versionsPerModule };
}

/** One module with a long history, like a popular public module (the AWS VPC module had 239 tags). */
export function generateBigModule({ dir, versions = 240, seed = 1, method }) {
  return generateCorpus({ dir, modules: 1, versionsPerModule: versions, seed, method, size: 'huge' });
}

/** Every file of every tag, rendered in memory (no git): for checking the generator. */
export function corpusSnapshots({ modules, versionsPerModule, seed = 1, namePrefix = 'm', size }) {
  const out = [];
  for (let index = 0; index < modules; index++) {
    const history = moduleHistory({ index, versions: versionsPerModule, seed, namePrefix, size });
    let files = new Map();
    for (const step of history.steps) {
      files = new Map(files);
      for (const [p, c] of step.files)
        if (c === undefined) files.delete(p);
        else files.set(p, c);
      out.push({ repo: history.name, tag: step.tag, files });
    }
  }
  return out;
}
