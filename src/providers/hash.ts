// The two hashes Terraform and OpenTofu check a provider package against,
// as its lock file and the network mirror protocol write them:
//   zh: the sha256 of the zip file itself (what a registry's SHA256SUMS lists);
//   h1: Go's dirhash "Hash1" over the zip's entries, so it stays the same
//       whether the package came as a zip or was unpacked.
// The zip's bytes are never changed: lock files users already hold must match.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type yauzl from 'yauzl';

export interface PackageHashes {
  /** "h1:" + base64, over the entries. */
  h1: string;
  /** "zh:" + lower-case hex sha256 of the zip file. */
  zh: string;
}

export async function packageHashes(zipFile: string): Promise<PackageHashes> {
  const [h1, zh] = await Promise.all([hashZipEntries(zipFile), hashZipFile(zipFile)]);
  return { h1, zh };
}

export async function hashZipFile(zipFile: string): Promise<string> {
  return `zh:${await sha256Hex(createReadStream(zipFile))}`;
}

/**
 * dirhash.Hash1 as Go's golang.org/x/mod computes it over a zip: one line
 * "<hex sha256 of content>  <name>\n" per entry, entries sorted by the bytes
 * of their names as stored (directory entries included, names not decoded or
 * cleaned), then "h1:" + base64 of the sha256 of all lines.
 */
export async function hashZipEntries(zipFile: string): Promise<string> {
  const zip = await openZip(zipFile);
  try {
    const entries = await readEntries(zip);
    // A name stored twice: Go hashes the last entry of that name, once per listing.
    const byName = new Map<string, yauzl.Entry>();
    for (const entry of entries) byName.set(entry.fileNameRaw.toString('latin1'), entry);
    const names = entries.map((e) => e.fileNameRaw).sort((a, b) => Buffer.compare(a, b));
    const summary = createHash('sha256');
    for (const name of names) {
      if (name.includes(0x0a)) throw new Error(`${zipFile}: entry name ${JSON.stringify(name.toString())} contains a newline; it cannot be hashed`);
      const entry = byName.get(name.toString('latin1'))!;
      const digest = await sha256Hex(await openEntry(zip, entry));
      summary.update(`${digest}  `);
      summary.update(name);
      summary.update('\n');
    }
    return `h1:${summary.digest('base64')}`;
  } finally {
    zip.close();
  }
}

async function sha256Hex(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(stream, hash);
  return hash.digest('hex');
}

async function openZip(file: string): Promise<yauzl.ZipFile> {
  // Loaded when a zip is hashed, not by every command that imports this module (publish of a module among them).
  const { default: zipReader } = await import('yauzl');
  return new Promise((resolve, reject) => {
    // Raw names (decodeStrings: false) are what Go hashes; yauzl would otherwise translate them.
    zipReader.open(file, { lazyEntries: true, autoClose: false, decodeStrings: false }, (error, zip) => {
      if (error) reject(new Error(`${file}: not a readable zip file: ${error.message}`));
      else resolve(zip);
    });
  });
}

function readEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', reject);
    zip.readEntry();
  });
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream)));
  });
}
