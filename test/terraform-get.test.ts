// What Terraform itself (its go-getter) installs from our archive of a module
// whose example folder is made of symlinks, and from a tarball that keeps the
// links as `git archive` does: the evidence for carrying links as files. Runs
// when terraform is on PATH.

import { execFile, execFileSync } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { archiveFile } from '../src/protocol/paths.js';
import { APP, V1, V1_LINKS } from './fixtures/history.js';
import { hasTerraform, makeRepo, runCli, tempDir, writeFiles } from './helpers.js';

const EKS = { namespace: 'acme', name: 'eks', provider: 'aws' };

describe.skipIf(!hasTerraform)('terraform get with the archive (real client)', () => {
  it('installs an example made of links with every file; a tarball keeping the links installs empty files', async () => {
    const dir = tempDir();
    const repo = join(dir, 'repo');
    makeRepo(repo, [{ date: '2024-01-01T00:00:00Z', files: V1, links: V1_LINKS, tags: ['v1.0.0'] }]);
    writeFiles(dir, { 'mirror.config.yaml': 'sources:\n  - git: repo\n    namespace: acme\n    name: eks\n    provider: aws\n' });
    expect((await runCli(['build', '--json'], dir)).code).toBe(0);
    // What git archive (and a GitHub tarball) gives: symlink entries.
    execFileSync('git', ['archive', '--format=tar.gz', '-o', join(dir, 'git-archive.tar.gz'), 'v1.0.0'], { cwd: repo });
    const files: Record<string, string> = {
      '/mirror.tar.gz': join(dir, 'dist', archiveFile(EKS, '1.0.0')),
      '/git-archive.tar.gz': join(dir, 'git-archive.tar.gz'),
    };
    // Plain bytes, no Content-Encoding: the archive as a static host serves it.
    const server = createServer((req, res) => {
      const file = files[req.url ?? ''];
      if (!file) return res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'application/gzip' }).end(readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const root = join(dir, 'config');
      writeFiles(root, {
        'main.tf': `module "mirrored" {\n  source = "http://127.0.0.1:${port}/mirror.tar.gz//examples/app_v2"\n}\n\nmodule "linked" {\n  source = "http://127.0.0.1:${port}/git-archive.tar.gz//examples/app_v2"\n}\n`,
        'cli.tfrc': '',
      });
      const env = { ...process.env, TF_CLI_CONFIG_FILE: join(root, 'cli.tfrc'), CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1' };
      // Not execFileSync: the server answering terraform runs in this process.
      await promisify(execFile)('terraform', ['get'], { cwd: root, env, timeout: 60_000 });
      const installed = (module: string, name: string) => join(root, '.terraform/modules', module, 'examples/app_v2', name);
      for (const name of ['main.tf', 'variables.tf', 'outputs.tf']) {
        expect(lstatSync(installed('mirrored', name)).isFile()).toBe(true);
        expect(readFileSync(installed('mirrored', name), 'utf8')).toBe(APP[`examples/app/${name}` as keyof typeof APP]);
        // The evidence for carrying links as files: go-getter writes a link entry as an empty file.
        expect(readFileSync(installed('linked', name), 'utf8')).toBe('');
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
