// Reads git objects through one long-running `git cat-file --batch` per
// repository. Starting a process per version (`git archive`) blocks Node's
// thread for milliseconds each time, more as the process grows; one reader
// per repository turns hundreds of starts into one.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { MirrorError } from '../errors.js';
import type { SourceFile } from '../types.js';
import type { SymlinkEntry } from './links.js';
import { nameFromBytes } from './names.js';

/** An object as cat-file gives it: its id, its type and its content. */
export interface GitObject {
  oid: string;
  type: string;
  data: Buffer;
}

interface Pending {
  name: string;
  resolve: (object: GitObject | undefined) => void;
  reject: (error: Error) => void;
}

/** `<oid> <type> <size>`: SHA-1 or SHA-256 ids. */
const OBJECT_HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) ([a-z]+) ([0-9]+)$/;

/** Objects are immutable, and most of a module's files and folders repeat from tag to tag. */
const CACHE_BYTES = 64 * 1024 * 1024;

export class GitObjectReader {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending: Pending[] = [];
  private readonly cache = new Map<string, Promise<GitObject>>();
  private cacheBytes = 0;
  private buffer: Buffer = Buffer.alloc(0);
  private failure: Error | undefined;

  constructor(readonly gitDir: string) {
    this.child = spawn('git', ['cat-file', '--batch'], { cwd: gitDir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    this.child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    this.child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.stdin.on('error', () => {});
    const fail = (message: string) => {
      this.failure = new MirrorError('GIT_FAILED', message);
      for (const p of this.pending.splice(0)) p.reject(this.failure);
    };
    this.child.on('error', (error) => fail(`Could not run git cat-file in ${gitDir}: ${error.message}`));
    this.child.on('close', (code) => {
      if (this.pending.length > 0) fail(`git cat-file in ${gitDir} stopped (exit ${code}): ${stderr.trim()}`);
    });
  }

  read(oid: string): Promise<GitObject> {
    const cached = this.cache.get(oid);
    if (cached) return cached;
    const object = this.request(oid).then((found) => found ?? Promise.reject(new MirrorError('GIT_FAILED', `git object ${oid} is missing from ${this.gitDir}`)));
    this.cache.set(oid, object);
    object.then(
      ({ data }) => this.account(data.length),
      () => this.cache.delete(oid),
    );
    return object;
  }

  /**
   * The object any revision names (`v1.2.0^{commit}`, `<commit>:modules/vpc`),
   * undefined when the repository has none by that name. Not cached: a branch moves.
   */
  lookup(revision: string): Promise<GitObject | undefined> {
    // One name a line: a line break would make cat-file answer two requests for one.
    if (revision === '' || /[\0-\x1f\x7f]/.test(revision)) return Promise.resolve(undefined);
    return this.request(revision);
  }

  private request(name: string): Promise<GitObject | undefined> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.push({ name, resolve, reject });
      this.child.stdin.write(`${name}\n`);
    });
  }

  private account(bytes: number): void {
    this.cacheBytes += bytes;
    if (this.cacheBytes <= CACHE_BYTES) return;
    // Crude but bounded: start over rather than track recency per object.
    this.cache.clear();
    this.cacheBytes = 0;
  }

  close(): void {
    this.child.stdin.end();
  }

  /** Responses come in request order: `<oid> <type> <size>\n<content>\n`, or `<name> missing\n` (or `ambiguous`). */
  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const newline = this.buffer.indexOf(10);
      if (newline === -1) return;
      const request = this.pending[0];
      if (!request) return;
      // Anything but an object's header answers a name with no object: `<name> missing`, `<name> ambiguous`.
      const header = OBJECT_HEADER.exec(this.buffer.subarray(0, newline).toString('latin1'));
      if (!header) {
        this.buffer = this.buffer.subarray(newline + 1);
        this.pending.shift();
        request.resolve(undefined);
        continue;
      }
      const end = newline + 1 + Number(header[3]);
      if (this.buffer.length < end + 1) return;
      const data = Buffer.from(this.buffer.subarray(newline + 1, end));
      this.buffer = this.buffer.subarray(end + 1);
      this.pending.shift();
      request.resolve({ oid: header[1]!, type: header[2]!, data });
    }
  }
}

/** What a tree holds that a module is made of: its regular files and its symbolic links (submodules are not module files). */
export interface TreeEntries {
  files: SourceFile[];
  links: SymlinkEntry[];
}

/** Every regular file and symlink under a tree, read in memory; a link's blob is its target's path. */
export async function readTreeFiles(reader: GitObjectReader, tree: string, prefix = ''): Promise<TreeEntries> {
  const { data } = await reader.read(tree);
  const jobs: Promise<TreeEntries>[] = [];
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(32, i);
    const nul = data.indexOf(0, space);
    const mode = data.subarray(i, space).toString('latin1');
    const name = nameFromBytes(data.subarray(space + 1, nul));
    const oid = data.subarray(nul + 1, nul + 21).toString('hex');
    i = nul + 21;
    const path = `${prefix}${name}`;
    if (mode === '40000') jobs.push(readTreeFiles(reader, oid, `${path}/`));
    else if (mode === '100644' || mode === '100755') {
      jobs.push(reader.read(oid).then((blob) => ({ files: [{ path, mode: mode === '100755' ? 0o755 : 0o644, data: blob.data, id: oid }], links: [] })));
    } else if (mode === '120000') {
      jobs.push(reader.read(oid).then((blob) => ({ files: [], links: [{ path, target: nameFromBytes(blob.data) }] })));
    }
  }
  // Merged in tree order (git sorts a tree's entries), so the result does not depend on which read finished first.
  const parts = await Promise.all(jobs);
  return { files: parts.flatMap((p) => p.files), links: parts.flatMap((p) => p.links) };
}

/** One reader per repository for the length of a build. */
export class GitReaders {
  private readonly readers = new Map<string, GitObjectReader>();

  get(gitDir: string): GitObjectReader {
    let reader = this.readers.get(gitDir);
    if (!reader) this.readers.set(gitDir, (reader = new GitObjectReader(gitDir)));
    return reader;
  }

  /** Ends a repository's reader and drops its object cache, once no version still needs it. */
  close(gitDir: string): void {
    this.readers.get(gitDir)?.close();
    this.readers.delete(gitDir);
  }

  closeAll(): void {
    for (const reader of this.readers.values()) reader.close();
    this.readers.clear();
  }
}
