// The folder layout (src/scan/folder.ts): <namespace>/<name>/<provider>/<version>/
// folders become versions; anything else is skipped with a warning that names
// it; a folder's date and fingerprint come from its files' stats.

import { mkdirSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeFolder, scanFolder } from '../../src/scan/folder.js';
import type { ModuleAddress, ModuleMeta } from '../../src/types.js';
import { tempDir, writeFiles } from '../helpers.js';

const metaFor = (address: ModuleAddress): ModuleMeta => ({ owner: address.namespace, description: '', source: '', verified: false });

describe('scanFolder', () => {
  it('finds every version folder and skips bad addresses and non-versions, naming each', async () => {
    const dir = tempDir();
    writeFiles(dir, {
      'acme/vpc/aws/1.0.0/main.tf': '',
      'acme/vpc/aws/1.10.0/main.tf': '',
      'acme/vpc/aws/2.0.0-rc.1/main.tf': '',
      'acme/vpc/aws/latest/main.tf': '',
      'acme/dns/google/0.1.0/main.tf': '',
      'Acme Corp/vpc/aws/1.0.0/main.tf': '',
      'acme/vpc/aws/README.md': 'a file at version depth is not a version\n',
    });
    const warnings: string[] = [];

    const versions = await scanFolder({ kind: 'folder', dir }, metaFor, (w) => warnings.push(w));

    // Folder order (sorted paths); build sorts by version later.
    expect(versions.map((v) => `${v.address.namespace}/${v.address.name}/${v.address.provider}@${v.version}`)).toEqual([
      'acme/dns/google@0.1.0',
      'acme/vpc/aws@1.0.0',
      'acme/vpc/aws@1.10.0',
      'acme/vpc/aws@2.0.0-rc.1',
    ]);
    expect(warnings).toEqual([
      `${join(dir, 'Acme Corp/vpc/aws/1.0.0')}: skipping: "Acme Corp/vpc/aws" is not a valid module address`,
      `${join(dir, 'acme/vpc/aws/latest')}: skipping "latest": not a semver version`,
    ]);
    const v1 = versions[1]!;
    expect(v1.origin).toEqual({ kind: 'folder', dir: join(dir, 'acme/vpc/aws/1.0.0') });
    expect([v1.tag, v1.label]).toEqual(['1.0.0', join(dir, 'acme/vpc/aws/1.0.0')]);
    expect(v1.meta.owner).toBe('acme');
  });

  it('normalises a version folder named with a leading v', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'acme/vpc/aws/v1.2.0/main.tf': '' });
    const versions = await scanFolder({ kind: 'folder', dir }, metaFor, () => {});
    expect(versions.map((v) => [v.tag, v.version])).toEqual([['v1.2.0', '1.2.0']]);
  });
});

describe('a folder the layout does not fit', () => {
  it('is named with the layout expected when a level is missing', async () => {
    const dir = tempDir();
    writeFiles(dir, { 'acme/hello/1.0.0/main.tf': 'variable "name" {}\n', 'acme/ok/null/1.0.0/main.tf': '', 'empty/.keep': '' });
    const warnings: string[] = [];

    const versions = await scanFolder({ kind: 'folder', dir }, metaFor, (w) => warnings.push(w));

    expect(versions.map((v) => v.label)).toEqual([join(dir, 'acme/ok/null/1.0.0')]);
    const layout = 'the layout is NAMESPACE/NAME/PROVIDER/VERSION/ (e.g. acme/network/aws/1.0.0/main.tf)';
    expect(warnings).toEqual([
      `${join(dir, 'acme/hello/1.0.0')}: skipping: no folder in it, so no version: ${layout}, and "1.0.0" is at the PROVIDER level`,
      `${join(dir, 'empty')}: skipping: no folder in it, so no version: ${layout}, and "empty" is at the NAMESPACE level`,
    ]);
  });

  it('warns about namespace and name folders whose names are not UTF-8 as about any other invalid name', async () => {
    const dir = tempDir();
    // Made by their bytes: a string path cannot spell them.
    for (const parts of [
      ['ns', Buffer.of(0xff), '/vpc/aws/1.0.0'],
      ['acme/n', Buffer.of(0xe9), '/aws/1.0.0'],
    ]) {
      const path = Buffer.concat([Buffer.from(`${dir}/`), ...parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))]);
      mkdirSync(path, { recursive: true });
      writeFileSync(Buffer.concat([path, Buffer.from('/main.tf')]), 'variable "a" {}\n');
    }
    writeFiles(dir, { 'Acme Corp/vpc/aws/1.0.0/main.tf': '', 'acme/vpc/aws/1.0.0/main.tf': '' });
    const warnings: string[] = [];

    const versions = await scanFolder({ kind: 'folder', dir }, metaFor, (w) => warnings.push(w));

    expect(versions.map((v) => v.label)).toEqual([join(dir, 'acme/vpc/aws/1.0.0')]);
    expect(warnings).toEqual([
      `${join(dir, 'Acme Corp/vpc/aws/1.0.0')}: skipping: "Acme Corp/vpc/aws" is not a valid module address`,
      `${join(dir, 'acme/n\\xe9/aws/1.0.0')}: skipping: "acme/n\\xe9/aws" is not a valid module address`,
      `${join(dir, 'ns\\xff/vpc/aws/1.0.0')}: skipping: "ns\\xff/vpc/aws" is not a valid module address`,
    ]);
  });
});

describe('describeFolder', () => {
  function folderWithTimes(): string {
    const dir = tempDir();
    writeFiles(dir, { 'main.tf': 'variable "a" {}\n', 'modules/nat/main.tf': '' });
    utimesSync(join(dir, 'main.tf'), 1_700_000_000, 1_700_000_000.75);
    utimesSync(join(dir, 'modules/nat/main.tf'), 1_600_000_000, 1_600_000_000);
    return dir;
  }

  it('dates a folder by its newest file, to the second', async () => {
    const { publishedAt } = await describeFolder(folderWithTimes());
    expect(publishedAt.toISOString()).toBe(new Date(1_700_000_000_000).toISOString());
  });

  it('gives the same fingerprint while names, sizes and times stay, and a new one when any changes', async () => {
    const dir = folderWithTimes();
    const { fingerprint } = await describeFolder(dir);
    expect(fingerprint).toMatch(/^stat:[0-9a-f]{40}$/);
    expect((await describeFolder(dir)).fingerprint).toBe(fingerprint);

    utimesSync(join(dir, 'modules/nat/main.tf'), 1_600_000_000, 1_600_000_001);
    const touched = (await describeFolder(dir)).fingerprint;
    expect(touched).not.toBe(fingerprint);

    writeFileSync(join(dir, 'modules/nat/main.tf'), 'x');
    utimesSync(join(dir, 'modules/nat/main.tf'), 1_600_000_000, 1_600_000_001);
    const resized = (await describeFolder(dir)).fingerprint;
    expect(resized).not.toBe(touched);

    writeFiles(dir, { 'outputs.tf': '' });
    const added = (await describeFolder(dir)).fingerprint;
    expect(added).not.toBe(resized);

    renameSync(join(dir, 'outputs.tf'), join(dir, 'outputs2.tf')); // same size and time, another name
    expect((await describeFolder(dir)).fingerprint).not.toBe(added);
  });
});
