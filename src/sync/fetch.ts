// Fetching one version's files into a scratch folder: an archive streamed
// from its URL through gunzip and tar, or a git repository cloned once per
// run and read with `git archive`. Only regular files and folders are taken:
// a link in an upstream archive could make the build read outside the module.

import { createHash, type Hash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar';
import { MirrorError, messageOf } from '../errors.js';
import { git } from '../scan/git.js';
import type { HttpClient } from './http.js';
import type { Location } from './location.js';

/**
 * Larger than any module: a bound on what a misbehaving upstream can make us
 * write, counted on the files as they come out of the archive (a small gzip
 * can expand a thousandfold), and on the compressed bytes too.
 */
const MAX_ARCHIVE_BYTES = 512 * 1024 * 1024;

/** What a location gave: the folder that is the module (after `//subdir`), and an archive's sha256 (none for git). */
export interface Fetched {
  root: string;
  sha256: string | undefined;
}

/** Fills `scratch` with the location's files. */
export async function fetchLocation(scratch: string, location: Location, http: HttpClient, repos: GitRepos, what: string): Promise<Fetched> {
  const files = join(scratch, 'files');
  let sha256: string | undefined;
  if (location.kind === 'archive') {
    sha256 = await http.get(location.url, `${what} archive`, async (body) => {
      // A retry starts again from an empty folder.
      await rm(files, { recursive: true, force: true });
      await mkdir(files, { recursive: true });
      return unpack(body, files, location.url.toString());
    });
  } else {
    const gitDir = await repos.get(location.url);
    const ref = location.ref ?? 'HEAD';
    if (!/^[A-Za-z0-9._/+][A-Za-z0-9._/+-]*$/.test(ref))
      throw new MirrorError('UPSTREAM_FAILED', `${what}: the git ref "${ref}" in ${location.url} is not a ref name.`);
    await mkdir(files, { recursive: true });
    let tarBytes: Buffer;
    try {
      tarBytes = await git(['--git-dir', gitDir, 'archive', '--format=tar', ref]);
    } catch (error) {
      throw new MirrorError('UPSTREAM_FAILED', `${what}: could not read ref "${ref}" of ${location.url}: ${messageOf(error)}`, {
        hint: 'Check that the ref the upstream names exists in the repository.',
        cause: error,
      });
    }
    await unpack(Readable.from([tarBytes]), files, `${location.url}?ref=${ref}`);
  }
  return { root: await moduleRoot(files, location.subdir, what), sha256 };
}

/**
 * Streams a (gzipped) tar into `dir`. Network errors pass through untouched,
 * so the HTTP client can retry them; anything tar or gunzip rejects is a
 * damaged or truncated archive, which another try would not mend. Gives
 * the sha256 of the bytes as they came (an archive's digest as the upstream
 * sent it).
 */
async function unpack(input: Readable, dir: string, source: string): Promise<string> {
  const hash = createHash('sha256');
  let written = 0;
  let tooLarge: MirrorError | undefined;
  const sink = extract({
    cwd: dir,
    strict: true,
    filter: (_path, entry) => {
      if (!('type' in entry) || (entry.type !== 'File' && entry.type !== 'Directory')) return false;
      // A file's size is in its header, read before any of its bytes: the cap holds before they are written.
      written += entry.size ?? 0;
      if (written <= MAX_ARCHIVE_BYTES) return true;
      tooLarge ??= new MirrorError(
        'UPSTREAM_FAILED',
        `The archive ${source} expands to more than ${MAX_ARCHIVE_BYTES / 1024 / 1024} MiB of files; a module never does.`,
        {
          hint: 'Nothing was stored for this version. If the module really is that large, copy it into a folder source instead.',
        },
      );
      sink.abort(tooLarge);
      return false;
    },
  });
  try {
    await pipeline(input, limit(MAX_ARCHIVE_BYTES, source, hash), sink);
  } catch (error) {
    if (tooLarge) throw tooLarge;
    const code = (error as { code?: unknown }).code;
    if (error instanceof MirrorError || (typeof code === 'string' && /^(UND_ERR|E[A-Z]+$)/.test(code))) throw error;
    throw new MirrorError('UPSTREAM_FAILED', `The archive ${source} is damaged or truncated: ${messageOf(error)}`, {
      hint: 'Nothing was stored for this version; sync fetches it again on the next run.',
      cause: error,
    });
  }
  if (tooLarge) throw tooLarge;
  return hash.digest('hex');
}

/** Passes at most `max` bytes on, counting each into `hash`. */
function limit(max: number, source: string, hash: Hash): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      hash.update(chunk);
      if (seen > max) done(new MirrorError('UPSTREAM_FAILED', `The archive ${source} is larger than ${max / 1024 / 1024} MiB; a module archive never is.`));
      else done(null, chunk);
    },
  });
}

/** `//subdir` selects a folder; `//*` the archive's only top folder (GitHub's archives have one). */
async function moduleRoot(files: string, subdir: string, what: string): Promise<string> {
  let root = files;
  if (subdir === '*') {
    const top = await readdir(files, { withFileTypes: true });
    if (top.length !== 1 || !top[0]!.isDirectory())
      throw new MirrorError('UPSTREAM_FAILED', `${what}: "//*" asks for the archive's only top folder, but it holds ${top.length} entries.`);
    root = join(files, top[0]!.name);
  } else if (subdir !== '') {
    root = join(files, ...subdir.split('/'));
    const isDir = await stat(root).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) throw new MirrorError('UPSTREAM_FAILED', `${what}: the archive has no folder "${subdir}", which the download location names.`);
  }
  if ((await readdir(root)).length === 0) throw new MirrorError('UPSTREAM_FAILED', `${what}: the download holds no files.`);
  return root;
}

/**
 * Bare clones of the repositories git locations name, one per URL per run,
 * in a temp folder removed at the end. Only https, http and ssh are allowed,
 * also for submodules, and git never prompts for a password.
 */
export class GitRepos {
  /** Made at the first git location, so a run without one (or one killed) leaves nothing behind. */
  private dir: string | undefined;
  private readonly clones = new Map<string, Promise<string>>();

  constructor() {
    // `git()` runs with this process's environment; a sync must never wait for a password prompt.
    process.env['GIT_TERMINAL_PROMPT'] = '0';
  }

  get(url: string): Promise<string> {
    let clone = this.clones.get(url);
    if (!clone) {
      this.dir ??= mkdtempSync(join(tmpdir(), 'modmirror-sync-git-'));
      const dest = join(this.dir, `${this.clones.size}.git`);
      clone = git([...PROTOCOLS, 'clone', '--bare', '--quiet', '--', url, dest]).then(
        () => dest,
        (error: unknown) => {
          throw new MirrorError('UPSTREAM_FAILED', `Could not clone ${url}: ${messageOf(error)}`, {
            hint: 'Check that this machine can reach the repository, and its credentials if it needs any.',
            cause: error,
          });
        },
      );
      this.clones.set(url, clone);
    }
    return clone;
  }

  async close(): Promise<void> {
    if (this.dir !== undefined) await rm(this.dir, { recursive: true, force: true });
  }
}

const PROTOCOLS = ['-c', 'protocol.allow=never', '-c', 'protocol.https.allow=always', '-c', 'protocol.http.allow=always', '-c', 'protocol.ssh.allow=always'];
