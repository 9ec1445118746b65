// A signed mirror in a bucket of a real S3 server (Ceph RGW): push carries a
// signed folder's signatures; publish and deprecate --sign-key into the
// bucket sign the module state and the root as they land (the root gets its
// new generation there), so gpg --verify accepts each object and verify
// --trust the bucket's mirror, copied down; a write without the key is
// refused, leaving the bucket as it was.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpg, type Gpg } from '../gpg.js';
import { runCli, tempDir, writeFiles } from '../helpers.js';
import { startRgw, type Rgw } from './rgw.js';

const dir = tempDir('mm-s3-signed-');
const env = { MODMIRROR_SIGNING_PASSPHRASE: 'mirror signer' };
const SIGN = ['--sign-key', 'keys/mirror-signer.key.asc'];
const BUCKET = 's3://mirror/reg';
let rgw: Rgw;
let g: Gpg;
const cli = (args: string[], withEnv: Record<string, string> = env) => runCli(args, dir, { ...rgw.env, ...withEnv });
const publishArgs = (version: string) => ['publish', '--source', 'extra', '--namespace', 'acme', '--name', 'net', '--provider', 'aws', '--version', version];

/** The bucket's mirror copied down into a folder (verify --trust reads a folder), every object as it is. */
async function copyDown(): Promise<string> {
  const to = join(dir, 'copy');
  rmSync(to, { recursive: true, force: true });
  for (const key of (await rgw.list('mirror', 'reg/')).keys()) {
    const file = join(to, key.slice('reg/'.length));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, (await rgw.get('mirror', key))!.body);
  }
  return to;
}

async function expectSigned(): Promise<void> {
  const copy = await copyDown();
  const verified = await runCli(['verify', '--mirror', copy, '--trust', 'keys/mirror-signer.pub.asc'], dir);
  expect(verified.code, verified.stderr).toBe(0);
  for (const rel of ['manifest.json', 'state/acme/net.aws.json']) expect(g.check(['--verify', join(copy, `${rel}.asc`), join(copy, rel)]).code, rel).toBe(0);
}

beforeAll(async () => {
  rgw = await startRgw(join(dir, 'rgw'));
  writeFiles(dir, { 'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n', 'extra/main.tf': 'variable "c" {}\n' });
  const made = await runCli(['key', 'create', '--name', 'Mirror Signer', '--email', 'm@example.com', '--algorithm', 'curve25519', '--out', 'keys'], dir, env);
  expect(made.code, made.stderr).toBe(0);
  g = gpg();
  g.run(['--import', join(dir, 'keys/mirror-signer.pub.asc')]);
  expect((await runCli(['build', '--modules', 'mods', '--mirror', 'dist', ...SIGN], dir, env)).code).toBe(0);
  await rgw.createBucket('mirror');
  const pushed = await cli(['push', BUCKET, '--mirror', 'dist', ...rgw.flags]);
  expect(pushed.code, pushed.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  g?.close();
  await rgw?.stop();
}, 60_000);

describe('a signed mirror in a bucket', () => {
  it('is pushed with its signatures', () => expectSigned());

  it('stays signed through publish and deprecate --sign-key', async () => {
    const published = await cli([...publishArgs('1.1.0'), '--mirror', BUCKET, ...rgw.flags, ...SIGN, '--json']);
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout).uploaded).toEqual(expect.arrayContaining(['state/acme/net.aws.json.asc', 'manifest.json.asc']));
    await expectSigned();
    const deprecated = await cli(['deprecate', 'acme/net/aws', '1.0.0', '--reason', 'old', '--mirror', BUCKET, ...rgw.flags, ...SIGN]);
    expect(deprecated.code, deprecated.stderr).toBe(0);
    await expectSigned();
  }, 60_000);

  it('refuses a write without the key (exit 1) and is left as it was', async () => {
    const before = await rgw.list('mirror', 'reg/');
    const refused = await cli([...publishArgs('1.2.0'), '--mirror', BUCKET, ...rgw.flags], {});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/The mirror is signed \(manifest\.json\.asc\), and this write has no key/);
    expect(await rgw.list('mirror', 'reg/')).toEqual(before);
    await expectSigned();
  }, 60_000);
});
