// Reading and writing a bundle's tar entries directly, for tests that look
// inside a bundle or make one by hand (tampered, or as an older modmirror wrote it).

import { writeFileSync } from 'node:fs';
import { Header, list, Pack, ReadEntry } from 'tar';

export async function entriesOf(bundle: string): Promise<[string, Buffer][]> {
  const entries: [string, Buffer][] = [];
  await list({
    file: bundle,
    onReadEntry: (entry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () => entries.push([entry.path, Buffer.concat(chunks)]));
    },
  });
  return entries;
}

/** Writes a gzipped tar with exactly these entries, in order. */
export async function packEntries(file: string, entries: [string, Buffer][]): Promise<void> {
  const pack = new Pack({ gzip: true, portable: true });
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    pack.on('data', (c: Buffer) => chunks.push(c));
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  for (const [path, data] of entries) {
    const entry = new ReadEntry(new Header({ path, type: 'File', mode: 0o644, size: data.length, mtime: new Date(0) }));
    entry.end(data);
    pack.add(entry);
  }
  pack.end();
  await done;
  writeFileSync(file, Buffer.concat(chunks));
}
