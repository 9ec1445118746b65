// Each version's provenance through the CLI: build and publish write
// ARCHIVE.intoto.jsonl, an in-toto statement (SLSA provenance) of the archive
// in a DSSE envelope; signed with --sign-key, and the signature checked by
// GnuPG over DSSE's PAE computed here, not by modmirror's code. Unsigned
// provenance is the same bytes for the same sources; a published version's
// provenance is kept; verify finds one whose subject is not the archive; a
// bad signing key stops the build before it writes anything.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pae, verifyEnvelope } from '../../src/openpgp/dsse.js';
import { readPublicKeys } from '../../src/openpgp/keys.js';
import { gpg, type Gpg } from '../gpg.js';
import { makeRepo, runCli, tempDir, writeFiles } from '../helpers.js';

const dir = tempDir('mm-provenance-');
const PASSPHRASE = 'provenance signer';
const env = { MODMIRROR_SIGNING_PASSPHRASE: PASSPHRASE };
const ARCHIVE = 'v1/modules/acme/net/aws/1.0.0/net-aws-1.0.0.tar.gz';
const provenanceOf = (mirror: string, archive = ARCHIVE) => join(dir, mirror, `${archive}.intoto.jsonl`);

interface Envelope {
  payloadType: string;
  payload: string;
  signatures: Array<{ keyid: string; sig: string }>;
}
const envelopeIn = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Envelope;
const statementOf = (e: Envelope) => JSON.parse(Buffer.from(e.payload, 'base64').toString('utf8')) as Record<string, any>;
const sha256Of = (file: string) => execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0];

let g: Gpg;
let commit: string;

beforeAll(async () => {
  makeRepo(join(dir, 'repo'), [{ files: { 'main.tf': 'variable "a" {}\n' }, tags: ['v1.0.0'], date: '2024-03-01T10:00:00Z' }]);
  commit = execFileSync('git', ['rev-parse', 'v1.0.0^{commit}'], { cwd: join(dir, 'repo'), encoding: 'utf8' }).trim();
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - git: repo\n    namespace: acme\n    name: net\n    provider: aws\n    source: https://git.example.com/acme/net\n',
  });
  const made = await runCli(
    ['key', 'create', '--name', 'Provenance Signer', '--email', 'prov@example.com', '--out', 'keys', '--algorithm', 'curve25519', '--json'],
    dir,
    env,
  );
  expect(made.code, made.stderr).toBe(0);
  g = gpg();
  g.run(['--import', join(dir, 'keys/provenance-signer.pub.asc')]);
});

afterAll(() => g?.close());

describe('build --sign-key', () => {
  it('writes a signed in-toto statement of the archive that gpg accepts over the PAE', async () => {
    const built = await runCli(['build', '--mirror', 'signed', '--sign-key', 'keys/provenance-signer.key.asc'], dir, env);
    expect(built.code, built.stderr).toBe(0);
    const text = readFileSync(provenanceOf('signed'), 'utf8');
    expect(text.split('\n')).toHaveLength(2); // one JSON line
    const envelope = envelopeIn(provenanceOf('signed'));
    expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
    const statement = statementOf(envelope);
    expect(statement['_type']).toBe('https://in-toto.io/Statement/v1');
    expect(statement['predicateType']).toBe('https://slsa.dev/provenance/v1');
    expect(statement['subject']).toEqual([{ name: 'net-aws-1.0.0.tar.gz', digest: { sha256: sha256Of(join(dir, 'signed', ARCHIVE)) } }]);
    const definition = statement['predicate'].buildDefinition;
    expect(definition.externalParameters).toMatchObject({ repository: 'https://git.example.com/acme/net', ref: 'refs/tags/v1.0.0' });
    expect(definition.resolvedDependencies[0]).toMatchObject({ uri: 'git+https://git.example.com/acme/net@refs/tags/v1.0.0', digest: { gitCommit: commit } });
    expect(statement['predicate'].runDetails.builder.id).toMatch(/^pkg:npm\/modmirror@\d/);
    expect(statement['predicate'].runDetails.metadata.finishedOn).toBe('2024-03-01T10:00:00.000Z');

    // The independent check: DSSE's PAE built here from the spec's definition, the signature checked by gpg.
    expect(envelope.signatures).toHaveLength(1);
    const payload = Buffer.from(envelope.payload, 'base64');
    const paeFile = join(dir, 'pae.bin');
    const sigFile = join(dir, 'pae.sig');
    writeFileSync(paeFile, Buffer.concat([Buffer.from(`DSSEv1 28 application/vnd.in-toto+json ${payload.length} `), payload]));
    writeFileSync(sigFile, Buffer.from(envelope.signatures[0]!.sig, 'base64'));
    expect(readFileSync(paeFile).equals(pae(envelope.payloadType, payload))).toBe(true);
    expect(g.check(['--verify', sigFile, paeFile]).code).toBe(0);
    const fingerprints = g
      .run(['--with-colons', '--fingerprint'])
      .split('\n')
      .filter((l) => l.startsWith('fpr:'));
    expect(fingerprints[0]!.split(':')[9]).toBe(envelope.signatures[0]!.keyid);
    // A statement changed after signing is refused by gpg and by modmirror alike.
    const altered = Buffer.from(payload.toString('utf8').replace('v1.0.0', 'v1.0.1'));
    writeFileSync(paeFile, pae(envelope.payloadType, altered));
    expect(g.check(['--verify', sigFile, paeFile]).code).not.toBe(0);
    const trusted = (await readPublicKeys(join(dir, 'keys/provenance-signer.pub.asc'))).map((key) => ({ key, file: 'signer' }));
    expect(await verifyEnvelope(envelope, trusted)).toMatchObject({ ok: true });
    expect(await verifyEnvelope({ ...envelope, payload: altered.toString('base64') }, trusted)).toMatchObject({ ok: false });
  });

  it('keeps a published version provenance as it is on a rebuild', async () => {
    const before = readFileSync(provenanceOf('signed'));
    const rebuilt = await runCli(['build', '--mirror', 'signed', '--clean', '--sign-key', 'keys/provenance-signer.key.asc'], dir, env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(readFileSync(provenanceOf('signed')).equals(before)).toBe(true);
  });
});

describe('publish --sign-key', () => {
  it('signs the provenance of a version published from a git tag; a wrong passphrase writes nothing', async () => {
    makeRepo(join(dir, 'repo2'), [{ files: { 'main.tf': 'variable "c" {}\n' }, tags: ['v3.0.0'], date: '2024-05-01T10:00:00Z' }]);
    const address = ['--namespace', 'acme', '--name', 'net', '--provider', 'aws'];
    const wrong = await runCli(
      ['publish', '--git', 'repo2', '--ref', 'v3.0.0', ...address, '--mirror', 'signed', '--sign-key', 'keys/provenance-signer.key.asc'],
      dir,
      {
        MODMIRROR_SIGNING_PASSPHRASE: 'wrong',
      },
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/does not unlock the signing key/);
    const archive = 'v1/modules/acme/net/aws/3.0.0/net-aws-3.0.0.tar.gz';
    expect(existsSync(join(dir, 'signed', archive))).toBe(false);
    const published = await runCli(
      ['publish', '--git', 'repo2', '--ref', 'v3.0.0', ...address, '--mirror', 'signed', '--sign-key', 'keys/provenance-signer.key.asc'],
      dir,
      env,
    );
    expect(published.code, published.stderr).toBe(0);
    const envelope = envelopeIn(provenanceOf('signed', archive));
    const statement = statementOf(envelope);
    expect(statement['subject'][0].digest.sha256).toBe(sha256Of(join(dir, 'signed', archive)));
    expect(statement['predicate'].buildDefinition.externalParameters.ref).toBe('refs/tags/v3.0.0');
    const payload = Buffer.from(envelope.payload, 'base64');
    writeFileSync(join(dir, 'pae3.bin'), pae(envelope.payloadType, payload));
    writeFileSync(join(dir, 'pae3.sig'), Buffer.from(envelope.signatures[0]!.sig, 'base64'));
    expect(g.check(['--verify', join(dir, 'pae3.sig'), join(dir, 'pae3.bin')]).code).toBe(0);
    expect((await runCli(['verify', 'signed'], dir)).code).toBe(0);
  });
});

describe('the config provenance: key', () => {
  it('signs as --sign-key does; a passphrase that does not unlock it is the config problem (exit 1), nothing written', async () => {
    const config = join(dir, 'with-key.yaml');
    writeFileSync(
      config,
      readFileSync(join(dir, 'mirror.config.yaml'), 'utf8') + 'provenance:\n  key: keys/provenance-signer.key.asc\n  passphraseEnv: PROV_PASS\n',
    );
    const built = await runCli(['build', '--config', config, '--mirror', 'configured'], dir, { PROV_PASS: PASSPHRASE });
    expect(built.code, built.stderr).toBe(0);
    expect(envelopeIn(provenanceOf('configured')).signatures).toHaveLength(1);
    const wrong = await runCli(['build', '--config', config, '--mirror', 'never'], dir, { PROV_PASS: 'wrong' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/provenance: key .*provenance-signer\.key\.asc: the passphrase from PROV_PASS does not unlock it/);
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });
});

describe('unsigned provenance', () => {
  it('is the same bytes for the same sources, and has no signatures', async () => {
    expect((await runCli(['build', '--mirror', 'a'], dir)).code).toBe(0);
    expect((await runCli(['build', '--mirror', 'b'], dir)).code).toBe(0);
    const a = readFileSync(provenanceOf('a'));
    expect(a.equals(readFileSync(provenanceOf('b')))).toBe(true);
    expect(envelopeIn(provenanceOf('a')).signatures).toEqual([]);
  });

  it('is written by publish, for a folder with its fingerprint', async () => {
    writeFiles(dir, { 'v/acme/net/aws/2.0.0/main.tf': 'variable "b" {}\n' });
    const published = await runCli(['publish', '--source', 'v/acme/net/aws/2.0.0', '--mirror', 'a'], dir);
    expect(published.code, published.stderr).toBe(0);
    const file = provenanceOf('a', 'v1/modules/acme/net/aws/2.0.0/net-aws-2.0.0.tar.gz');
    const statement = statementOf(envelopeIn(file));
    expect(statement['subject'][0].digest.sha256).toBe(sha256Of(join(dir, 'a/v1/modules/acme/net/aws/2.0.0/net-aws-2.0.0.tar.gz')));
    expect(statement['predicate'].buildDefinition.resolvedDependencies[0].annotations.fingerprint).toMatch(/^stat:/);
  });

  it('whose subject is not the archive fails verify', async () => {
    expect((await runCli(['verify', 'a'], dir)).code).toBe(0);
    const file = provenanceOf('a');
    const envelope = envelopeIn(file);
    const statement = statementOf(envelope);
    statement['subject'][0].digest.sha256 = '0'.repeat(64);
    writeFileSync(file, JSON.stringify({ ...envelope, payload: Buffer.from(JSON.stringify(statement)).toString('base64') }) + '\n');
    const verified = await runCli(['verify', 'a'], dir);
    expect(verified.code).toBe(1);
    expect(verified.stdout + verified.stderr).toMatch(/intoto\.jsonl.*subject's sha256 0{64} is not the archive's/);
  });
});

describe('bundles', () => {
  it('carry the provenance; unbundle --trust refuses one whose provenance another key signed', async () => {
    const other = await runCli(
      ['key', 'create', '--name', 'Other Signer', '--email', 'other@example.com', '--out', 'other', '--algorithm', 'curve25519', '--json'],
      dir,
      env,
    );
    expect(other.code, other.stderr).toBe(0);
    expect((await runCli(['build', '--mirror', 'foreign', '--sign-key', 'other/other-signer.key.asc'], dir, env)).code).toBe(0);
    for (const mirror of ['signed', 'foreign']) {
      const bundled = await runCli(['bundle', '--mirror', mirror, '--out', `${mirror}.tar.gz`, '--sign-key', 'keys/provenance-signer.key.asc'], dir, env);
      expect(bundled.code, bundled.stderr).toBe(0);
    }
    const trust = ['--trust', 'keys/provenance-signer.pub.asc'];
    const taken = await runCli(['unbundle', 'signed.tar.gz', '--mirror', 'inside', ...trust], dir);
    expect(taken.code, taken.stderr).toBe(0);
    expect(readFileSync(provenanceOf('inside')).equals(readFileSync(provenanceOf('signed')))).toBe(true);
    const refused = await runCli(['unbundle', 'foreign.tar.gz', '--mirror', 'refused', ...trust], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /carries provenance whose signature does not verify[\s\S]*intoto\.jsonl: its signature is not accepted: signed by [0-9A-F]{16}, which is not a trusted key/,
    );
    expect(existsSync(provenanceOf('refused'))).toBe(false);
    // Trusting both keys, it is taken.
    expect((await runCli(['unbundle', 'foreign.tar.gz', '--mirror', 'refused', ...trust, '--trust', 'other/other-signer.pub.asc'], dir)).code).toBe(0);
  });
});

describe('a bad signing key', () => {
  // A key given on the command line that cannot sign as given is a usage error (exit 2), as for bundle --sign-key.
  it('stops the build before anything is written', async () => {
    writeFiles(dir, { 'not-a-key.asc': 'hello\n' });
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--sign-key', 'not-a-key.asc'], env, /--sign-key/],
      [['--sign-key', 'keys/provenance-signer.pub.asc'], env, /public|private/i],
      [['--sign-key', 'keys/provenance-signer.key.asc'], { MODMIRROR_SIGNING_PASSPHRASE: 'wrong' }, /does not unlock/],
    ];
    for (const [flags, environment, message] of cases) {
      const result = await runCli(['build', '--mirror', 'never', ...flags], dir, environment);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(existsSync(join(dir, 'never'))).toBe(false);
    }
    expect((await runCli(['build', '--mirror', 'never', '--passphrase-env', 'X'], dir)).code).toBe(2);
  });
});
