// Tiny provider packages for tests: to `terraform init` a provider is a zip
// holding an executable named terraform-provider-TYPE_vVERSION, so a few
// bytes stand in for the binary.

import { createWriteStream } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { once } from 'node:events';
import yazl from 'yazl';

export interface ZipEntry {
  name: string;
  /** Omitted for a directory entry (the name ends in "/"). */
  content?: string | Buffer;
  /** Stored without compression. */
  store?: boolean;
  mode?: number;
}

export async function writeZip(file: string, entries: ZipEntry[]): Promise<void> {
  mkdirSync(dirname(file), { recursive: true });
  const zip = new yazl.ZipFile();
  const mtime = new Date('2024-01-02T03:04:05Z');
  for (const entry of entries) {
    if (entry.content === undefined) zip.addEmptyDirectory(entry.name, { mtime });
    else zip.addBuffer(Buffer.from(entry.content), entry.name, { mtime, compress: !entry.store, mode: entry.mode ?? 0o100755 });
  }
  zip.end();
  const out = zip.outputStream.pipe(createWriteStream(file));
  await once(out, 'finish');
}

/** A provider package as a release would name it: terraform-provider-TYPE_VERSION_OS_ARCH.zip. */
export async function writeProviderZip(dir: string, type: string, version: string, platform: string): Promise<string> {
  const file = `${dir}/terraform-provider-${type}_${version}_${platform}.zip`;
  await writeZip(file, [{ name: `terraform-provider-${type}_v${version}`, content: `#!/bin/sh\necho ${type} ${version} ${platform}\n` }]);
  return file;
}
