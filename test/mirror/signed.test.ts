// A signed mirror through the CLI: build and publish --sign-key sign the
// truth they change (each module state, and manifest.json), FILE.asc beside
// it, which gpg --verify accepts; a publish re-signs only its module's state
// and the root. verify --trust accepts the mirror, and fails one whose
// archive or state changed, one that is unsigned, and one signed by another key.

import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpg, type Gpg } from '../gpg.js';
import { runCli, tempDir, writeFiles } from '../helpers.js';

const dir = tempDir('mm-signed-mirror-');
const env = { MODMIRROR_SIGNING_PASSPHRASE: 'mirror signer' };
const SIGN = ['--sign-key', 'keys/mirror-signer.key.asc'];
const TRUST = ['--trust', 'keys/mirror-signer.pub.asc'];
let g: Gpg;

const verify = (mirror: string, trust = TRUST) => runCli(['verify', '--mirror', mirror, ...trust], dir);
/** A copy of the signed mirror to spoil, through any link of the mirror's own. */
const copyOf = (name: string) => {
  cpSync(join(dir, 'dist'), join(dir, name), { recursive: true, dereference: true });
  return name;
};

beforeAll(async () => {
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/dns/aws/1.0.0/main.tf': 'variable "b" {}\n',
    'extra/main.tf': 'variable "c" {}\n',
  });
  for (const name of ['Mirror Signer', 'Other Signer']) {
    const made = await runCli(['key', 'create', '--name', name, '--email', 'm@example.com', '--algorithm', 'curve25519', '--out', 'keys'], dir, env);
    expect(made.code, made.stderr).toBe(0);
  }
  g = gpg();
  g.run(['--import', join(dir, 'keys/mirror-signer.pub.asc')]);
  const built = await runCli(['build', ...SIGN], dir, env);
  expect(built.code, built.stderr).toBe(0);
});

afterAll(() => g?.close());

describe('build and publish --sign-key', () => {
  it('sign each module state and the root, as gpg --verify accepts', async () => {
    for (const rel of ['manifest.json', 'state/acme/net.aws.json', 'state/acme/dns.aws.json'])
      expect(g.check(['--verify', join(dir, 'dist', `${rel}.asc`), join(dir, 'dist', rel)]).code, rel).toBe(0);
    const verified = await verify('dist');
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('a publish signs only the state it changes and the root', async () => {
    const other = readFileSync(join(dir, 'dist/state/acme/dns.aws.json.asc'));
    const root = readFileSync(join(dir, 'dist/manifest.json.asc'));
    const published = await runCli(
      ['publish', '--source', 'extra', '--namespace', 'acme', '--name', 'net', '--provider', 'aws', '--version', '1.1.0', ...SIGN],
      dir,
      env,
    );
    expect(published.code, published.stderr).toBe(0);
    expect(readFileSync(join(dir, 'dist/state/acme/dns.aws.json.asc')).equals(other)).toBe(true);
    expect(readFileSync(join(dir, 'dist/manifest.json.asc')).equals(root)).toBe(false);
    for (const rel of ['manifest.json', 'state/acme/net.aws.json'])
      expect(g.check(['--verify', join(dir, 'dist', `${rel}.asc`), join(dir, 'dist', rel)]).code, rel).toBe(0);
    expect((await verify('dist')).code).toBe(0);
  });
});

describe('verify --trust', () => {
  it('fails a changed archive', async () => {
    const mirror = copyOf('changed-archive');
    const archive = join(dir, mirror, 'v1/modules/acme/dns/aws/1.0.0/dns-aws-1.0.0.tar.gz');
    const bytes = readFileSync(archive);
    bytes[bytes.length - 1]! ^= 1;
    writeFileSync(archive, bytes);
    const result = await verify(mirror);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/dns-aws-1\.0\.0\.tar\.gz: sha256 \w+ differs/);
  });

  it('fails a changed state, an unsigned mirror and a mirror signed by another key', async () => {
    const changed = copyOf('changed-state');
    const state = join(dir, changed, 'state/acme/dns.aws.json');
    // Still the same JSON, other bytes: the signature is over the bytes.
    writeFileSync(state, readFileSync(state, 'utf8') + ' ');
    const result = await verify(changed);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/state\/acme\/dns\.aws\.json: it changed after it was signed/);

    const unsigned = await runCli(['build', '--mirror', 'unsigned'], dir);
    expect(unsigned.code).toBe(0);
    const refused = await verify('unsigned');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/manifest\.json: is not signed: no manifest\.json\.asc beside it/);

    const foreign = await runCli(['build', '--mirror', 'foreign', '--sign-key', 'keys/other-signer.key.asc'], dir, env);
    expect(foreign.code).toBe(0);
    const untrusted = await verify('foreign');
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/manifest\.json: it is signed by a key that is not trusted/);
    expect((await verify('foreign', ['--trust', 'keys/other-signer.pub.asc'])).code).toBe(0);
  });

  it('refuses a key file that is not a public key (exit 2)', async () => {
    const result = await verify('dist', ['--trust', 'keys/mirror-signer.key.asc']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/private key/);
  });
});
