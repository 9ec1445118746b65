// A module version uploaded over the API (HCP's registry-module-versions
// upload: a tar.gz with the module's files at its root, as go-slug and
// `tar zcf module.tar.gz *` make it), unpacked into a folder so publish()
// takes it as it takes `modmirror publish --source DIR`. Unpacking refuses,
// rather than mends, what a module never holds: entries outside it, links
// leaving it, devices; and bounds both the upload and what it unpacks to.

import { mkdir } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar';
import { MirrorError, messageOf } from '../errors.js';
import { describeFolder } from '../scan/folder.js';
import type { ModuleAddress, ModuleMeta, VersionSource } from '../types.js';

export interface UploadLimits {
  /** The upload's own size (the gzip). */
  maxBytes: number;
  /** What it unpacks to, so a small gzip cannot fill the disk. */
  maxUnpackedBytes: number;
}

const KINDS = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link']);

/** Unpacks `input` into `dir` (which exists and is empty); throws UNPROCESSABLE or PAYLOAD_TOO_LARGE naming what is wrong. */
export async function unpackUpload(input: Readable, dir: string, limits: UploadLimits): Promise<void> {
  await mkdir(dir, { recursive: true });
  const problems: string[] = [];
  const sink = extract({
    cwd: dir,
    strict: true,
    filter: (path, entry) => {
      const problem = entryProblem(path, 'type' in entry ? entry.type : 'File', 'linkpath' in entry ? entry.linkpath : undefined);
      if (problem) problems.push(problem);
      return problem === undefined;
    },
  });
  try {
    await pipeline(input, limited(limits.maxBytes, 'upload'), gzipOnly(), createGunzip(), limited(limits.maxUnpackedBytes, 'unpacked'), sink);
  } catch (error) {
    if (error instanceof MirrorError) throw error;
    throw invalid(`The upload is not a readable tar.gz: ${messageOf(error)}`);
  }
  if (problems.length > 0)
    throw invalid(
      `The upload has entries a module cannot hold:\n${problems
        .slice(0, 20)
        .map((p) => `  ${p}`)
        .join('\n')}`,
    );
}

/** Why an entry cannot be part of a module, or undefined. */
function entryProblem(path: string, type: string, linkpath: string | undefined): string | undefined {
  const name = path.replace(/^(\.\/)+/, '');
  if (!KINDS.has(type)) return `${path}: a ${type} entry; a module holds files, folders and links`;
  // `tar -C DIR .` starts with the root itself.
  if (type === 'Directory' && (name === '' || name === '.' || name === './')) return undefined;
  if (!inside(name)) return `${path}: outside the module (absolute, or through "..")`;
  if (type === 'SymbolicLink' && (linkpath === undefined || !inside(posix.join(posix.dirname(name), linkpath)) || posix.isAbsolute(linkpath))) {
    return `${path}: a link to ${linkpath}, outside the module`;
  }
  if (type === 'Link' && (linkpath === undefined || !inside(linkpath.replace(/^(\.\/)+/, ''))))
    return `${path}: a hard link to ${linkpath}, outside the module`;
  return undefined;
}

const inside = (name: string) => name !== '' && !name.includes('\0') && !posix.isAbsolute(name) && !posix.normalize(name).split('/').includes('..');

const invalid = (message: string) =>
  new MirrorError('UNPROCESSABLE', message, { hint: "Upload a tar.gz of the module's files, at its root: tar zcf module.tar.gz -C MODULE_DIR ." });

function limited(max: number, what: 'upload' | 'unpacked'): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= max) return done(null, chunk);
      const mib = (max / 1024 / 1024).toFixed(0);
      done(
        what === 'upload'
          ? new MirrorError('PAYLOAD_TOO_LARGE', `The upload is larger than the limit of ${mib} MiB.`, {
              hint: 'Leave out what the module does not need (.terraformignore), or raise serve --max-upload-mib.',
            })
          : invalid(`The upload unpacks to more than ${mib} MiB.`),
      );
    },
  });
}

/** Says "not gzip" for what gunzip would call an incorrect header check. */
function gzipOnly(): Transform {
  let checked = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!checked && chunk.length > 0) {
        checked = true;
        if (chunk[0] !== 0x1f || (chunk.length > 1 && chunk[1] !== 0x8b)) return done(invalid('The upload is not gzip-compressed: send a tar.gz.'));
      }
      done(null, chunk);
    },
    flush(done) {
      done(checked ? null : invalid('The upload is empty: send a tar.gz of the module.'));
    },
  });
}

/**
 * The unpacked upload as publish takes a version: a folder source, labelled
 * for its messages, published now (an archive's file times say when its
 * files changed, and tools set them to anything, 1970 included).
 */
export async function uploadedVersion(dir: string, address: ModuleAddress, version: string, meta: ModuleMeta): Promise<VersionSource> {
  const { fingerprint } = await describeFolder(dir);
  return {
    address,
    meta,
    version,
    tag: version,
    publishedAt: new Date(Math.floor(Date.now() / 1000) * 1000),
    origin: { kind: 'folder', dir },
    label: `upload of ${address.namespace}/${address.name}/${address.provider} ${version}`,
    fingerprint,
  };
}
