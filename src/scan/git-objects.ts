// Reads git objects through one long-running `git cat-file --batch` per
// repository. Starting a process per version (`git archive`) blocks Node's
// thread for milliseconds each time, more as the process grows; one reader
// per repository turns hundreds of starts into one.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { MirrorError } from '../errors.js';
import type { VersionFile } from '../types.js';
import { holdBudget } from './large.js';
import type { SymlinkEntry } from './links.js';
import { nameFromBytes } from './names.js';

/** An object as cat-file gives it: its id, its type, its size and its content (none for a blob not held). */
export interface GitObject {
  oid: string;
  type: string;
  size: number;
  data: Buffer | undefined;
}

/** Whether a blob of this size is kept; one that is not passes through without being gathered (scan/large.ts). */
export type Hold = (size: number) => boolean;

interface Pending {
  name: string;
  hold: Hold;
  resolve: (object: GitObject | undefined) => void;
  reject: (error: Error) => void;
}

/** The object being received: its content goes into `data` (kept) or nowhere, then one line feed. */
interface Body {
  request: Pending;
  oid: string;
  type: string;
  size: number;
  data: Buffer | undefined;
  received: number;
}

/** `<oid> <type> <size>`: SHA-1 or SHA-256 ids. */
const OBJECT_HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) ([a-z]+) ([0-9]+)$/;

/** Objects are immutable, and most of a module's files and folders repeat from tag to tag. */
const CACHE_BYTES = 64 * 1024 * 1024;

const holdAll: Hold = () => true;

export class GitObjectReader {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending: Pending[] = [];
  private readonly cache = new Map<string, Promise<GitObject>>();
  private cacheBytes = 0;
  /** A header line's start, when a chunk ended inside it. */
  private head: Buffer = Buffer.alloc(0);
  private body: Body | undefined;
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

  /** `hold` decides for a blob not read before; a cached object is given as it was read. */
  read(oid: string, hold: Hold = holdAll): Promise<GitObject> {
    const cached = this.cache.get(oid);
    if (cached) return cached;
    const object = this.request(oid, hold).then(
      (found) => found ?? Promise.reject(new MirrorError('GIT_FAILED', `git object ${oid} is missing from ${this.gitDir}`)),
    );
    this.cache.set(oid, object);
    object.then(
      ({ data }) => this.account(data?.length ?? 0),
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
    return this.request(revision, holdAll);
  }

  private request(name: string, hold: Hold): Promise<GitObject | undefined> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.push({ name, hold, resolve, reject });
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

  /**
   * Responses come in request order: `<oid> <type> <size>\n<content>\n`, or
   * `<name> missing\n` (or `ambiguous`). Content is copied once into a buffer of
   * its size, as it arrives: gathering the pipe's 64 KiB chunks by concatenation
   * copied a large object once per chunk.
   */
  private onData(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.body) {
        at = this.receive(this.body, chunk, at);
        continue;
      }
      const newline = chunk.indexOf(10, at);
      if (newline === -1) {
        this.head = Buffer.concat([this.head, chunk.subarray(at)]);
        return;
      }
      const line = Buffer.concat([this.head, chunk.subarray(at, newline)]).toString('latin1');
      this.head = Buffer.alloc(0);
      at = newline + 1;
      const request = this.pending[0];
      if (!request) continue;
      // Anything but an object's header answers a name with no object: `<name> missing`, `<name> ambiguous`.
      const header = OBJECT_HEADER.exec(line);
      if (!header) {
        this.pending.shift();
        request.resolve(undefined);
        continue;
      }
      const [, oid, type, size] = header as unknown as [string, string, string, string];
      const keep = type !== 'blob' || request.hold(Number(size));
      this.body = { request, oid, type, size: Number(size), data: keep ? Buffer.allocUnsafe(Number(size)) : undefined, received: 0 };
    }
  }

  /** Takes what the chunk holds of the body from `at`, and the line feed after it; returns where it stopped. */
  private receive(body: Body, chunk: Buffer, at: number): number {
    const take = Math.min(body.size + 1 - body.received, chunk.length - at);
    const content = Math.max(0, Math.min(take, body.size - body.received));
    if (body.data && content > 0) chunk.copy(body.data, body.received, at, at + content);
    body.received += take;
    if (body.received === body.size + 1) {
      this.body = undefined;
      this.pending.shift();
      body.request.resolve({ oid: body.oid, type: body.type, size: body.size, data: body.data });
    }
    return at + take;
  }
}

/** What a tree holds that a module is made of: its regular files and its symbolic links (submodules are not module files). */
export interface TreeEntries {
  files: VersionFile[];
  links: SymlinkEntry[];
}

/**
 * Every regular file and symlink under a tree; a link's blob is its target's
 * path. A file is held as `hold` allows (one budget for the whole version),
 * else named by its blob id to be read again when packed.
 */
export async function readTreeFiles(reader: GitObjectReader, tree: string, hold: Hold = holdBudget(), prefix = ''): Promise<TreeEntries> {
  const data = held(await reader.read(tree));
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
    if (mode === '40000') jobs.push(readTreeFiles(reader, oid, hold, `${path}/`));
    else if (mode === '100644' || mode === '100755') {
      const fileMode = mode === '100755' ? 0o755 : 0o644;
      jobs.push(
        reader.read(oid, hold).then(({ data, size }) => {
          const file: VersionFile = data
            ? { path, mode: fileMode, data, id: oid }
            : { path, mode: fileMode, size, source: { kind: 'git', gitDir: reader.gitDir, oid }, id: oid };
          return { files: [file], links: [] };
        }),
      );
    } else if (mode === '120000') {
      jobs.push(reader.read(oid).then((blob) => ({ files: [], links: [{ path, target: nameFromBytes(held(blob)) }] })));
    }
  }
  // Merged in tree order (git sorts a tree's entries), so the result does not depend on which read finished first.
  const parts = await Promise.all(jobs);
  return { files: parts.flatMap((p) => p.files), links: parts.flatMap((p) => p.links) };
}

/** A tree's or a link's content; such an object is always kept, unless the cache has it as a large file's blob. */
function held({ oid, data }: GitObject): Buffer {
  if (!data) throw new MirrorError('GIT_FAILED', `git object ${oid} is too large to be a tree or a link's target`);
  return data;
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
