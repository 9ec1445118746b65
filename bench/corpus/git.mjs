// Writes a module's history as a git repository, with a fixed identity and
// fixed, increasing dates: `git fast-import` (fast) or add/commit/tag per
// version (the plain way); both give the same commit ids.

import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runCommand } from '../util.mjs';

const IDENTITY = { name: 'Bench Bot', email: 'bench@modmirror.invalid' };
const BASE_TIME = Date.UTC(2020, 0, 1) / 1000;

/** git with `env` added to this process's environment (runCommand takes a whole environment). */
function git(args, { cwd, input, env } = {}) {
  return runCommand('git', args, { cwd, input, env: env ? { ...process.env, ...env } : undefined });
}

/** Commit time of step k of module i: fixed, increasing within a repository. */
function commitTime(index, k) {
  return BASE_TIME + index * 3600 + k * 3 * 86400;
}

export async function initRepo(dir) {
  await mkdir(dir, { recursive: true });
  await git(['-c', 'init.defaultBranch=main', 'init', '-q', dir]);
  await git(['config', 'user.name', IDENTITY.name], { cwd: dir });
  await git(['config', 'user.email', IDENTITY.email], { cwd: dir });
  await git(['config', 'commit.gpgsign', 'false'], { cwd: dir });
  await git(['config', 'tag.gpgsign', 'false'], { cwd: dir });
}

/** One `git fast-import` for the whole history: fast, and the same commits as `git commit` would make. */
export async function writeWithFastImport(dir, index, history) {
  const chunks = [];
  const data = (text) => {
    chunks.push(`data ${Buffer.byteLength(text)}\n`, text, '\n');
  };
  const who = `${IDENTITY.name} <${IDENTITY.email}>`;
  history.steps.forEach((step, k) => {
    const t = commitTime(index, k);
    chunks.push('commit refs/heads/main\n', `mark :${k + 1}\n`, `author ${who} ${t} +0000\n`, `committer ${who} ${t} +0000\n`);
    data(`${step.message}\n`);
    if (k > 0) chunks.push(`from :${k}\n`);
    for (const [path, content] of [...step.files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (content === undefined) chunks.push(`D ${path}\n`);
      else {
        chunks.push(`M 100644 inline ${path}\n`);
        data(content);
      }
    }
    chunks.push('\n', `reset refs/tags/${step.tag}\n`, `from :${k + 1}\n`, '\n');
  });
  await git(['fast-import', '--quiet', '--done'], { cwd: dir, input: chunks.join('') + 'done\n' });
  await git(['reset', '-q', '--hard', 'main'], { cwd: dir });
}

/** The plain way: write the work tree, `git add`, `git commit`, `git tag` per version (slower; same commit ids). */
export async function writeWithCommits(dir, index, history) {
  for (const [k, step] of history.steps.entries()) {
    for (const [path, content] of step.files) {
      const file = join(dir, path);
      if (content === undefined) await rm(file, { force: true });
      else {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, content);
      }
    }
    const date = `${commitTime(index, k)} +0000`;
    const env = { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
    await git(['add', '-A'], { cwd: dir });
    await git(['commit', '-q', '--no-verify', '-m', step.message], { cwd: dir, env });
    await git(['tag', step.tag], { cwd: dir, env });
  }
}
