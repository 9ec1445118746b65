// A small provider registry (`providers.v1`) on 127.0.0.1 for sync tests,
// answering as the public registry does (versions, download/OS/ARCH with
// shasum, SHA256SUMS and its binary detached signature, signing_keys), with
// releases made by the test: tiny zips (test/providers/zips.ts) and an
// OpenPGP key generated per run. `faults` injects what a broken or hostile
// upstream sends.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { writeProviderZip, writeZip } from '../providers/zips.js';

export interface ProviderRelease {
  namespace: string;
  type: string;
  /** version -> platforms it has packages for */
  versions: Record<string, string[]>;
}

export interface Faults {
  /** `TYPE/VERSION`: SHA256SUMS signed over other bytes by the listed key. */
  badSignature: Set<string>;
  /** `TYPE/VERSION`: SHA256SUMS signed by a key the registry does not list. */
  unlistedKey: Set<string>;
  /** `TYPE/VERSION/PLATFORM`: the zip served is another one than the shasum names. */
  wrongZip: Set<string>;
  /** `TYPE/VERSION/PLATFORM`: SHA256SUMS lacks the package's line. */
  missingLine: Set<string>;
  /** `TYPE/VERSION/PLATFORM`: the zip is cut short (its shasum, SHA256SUMS and signature all describe the whole one). */
  truncated: Set<string>;
  /** `TYPE/VERSION/PLATFORM`: a release whose signed shasum is of a cut-short zip (signed, but not a zip). */
  signedBroken: Set<string>;
  /** Path -> how many more times it answers 503. */
  flaky: Map<string, number>;
  /** Zip file names sent half, then held open. */
  stall: Set<string>;
}

export interface ProviderUpstream {
  url: string;
  requests: string[];
  faults: Faults;
  /** The zip bytes served for a file name. */
  zips: Map<string, Buffer>;
  /** Called when a stalled zip has been half sent. */
  onStall: (file: string) => void;
  close: () => void;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

export async function startProviderUpstream(dir: string, releases: ProviderRelease[], options: { modules?: string } = {}): Promise<ProviderUpstream> {
  const listed = await openpgp.generateKey({
    type: 'ecc',
    curve: 'curve25519Legacy',
    userIDs: [{ name: 'Upstream Signing', email: 'sign@example.com' }],
    format: 'object',
  });
  const other = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'Someone Else' }], format: 'object' });
  const keyId = listed.publicKey.getKeyID().toHex().toUpperCase();
  const sign = async (data: Buffer, key: openpgp.PrivateKey) =>
    Buffer.from(await openpgp.sign({ message: await openpgp.createMessage({ binary: data }), signingKeys: key, detached: true, format: 'binary' }));

  const zips = new Map<string, Buffer>();
  const wrong = await (async () => {
    const file = join(dir, 'other.zip');
    await writeZip(file, [{ name: 'terraform-provider-impostor', content: 'not the real one\n' }]);
    return readFileSync(file);
  })();
  for (const r of releases) {
    for (const [version, platforms] of Object.entries(r.versions)) {
      for (const platform of platforms) {
        const file = await writeProviderZip(join(dir, 'releases'), r.type, version, platform);
        zips.set(file.split('/').pop()!, readFileSync(file));
      }
    }
  }
  const faults: Faults = {
    badSignature: new Set(),
    unlistedKey: new Set(),
    wrongZip: new Set(),
    missingLine: new Set(),
    truncated: new Set(),
    signedBroken: new Set(),
    flaky: new Map(),
    stall: new Set(),
  };
  const requests: string[] = [];
  const upstream: ProviderUpstream = { url: '', requests, faults, zips, onStall: () => {}, close: () => {} };
  const zipName = (type: string, version: string, platform: string) => `terraform-provider-${type}_${version}_${platform}.zip`;
  /** The bytes a package is published with: what its shasum and SHA256SUMS describe. */
  const published = (type: string, version: string, platform: string) => {
    const data = zips.get(zipName(type, version, platform))!;
    return faults.signedBroken.has(`${type}/${version}/${platform}`) ? data.subarray(0, data.length - 40) : data;
  };
  const sums = (r: ProviderRelease, version: string) => {
    const lines = r.versions[version]!.filter((p) => !faults.missingLine.has(`${r.type}/${version}/${p}`)).map(
      (p) => `${sha256(published(r.type, version, p))}  ${zipName(r.type, version, p)}`,
    );
    lines.push(`${sha256(Buffer.from('{}'))}  terraform-provider-${r.type}_${version}_manifest.json`);
    return Buffer.from(`${lines.sort().join('\n')}\n`);
  };

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    requests.push(path);
    const left = faults.flaky.get(path) ?? 0;
    if (left > 0) {
      faults.flaky.set(path, left - 1);
      res.writeHead(503, { 'content-type': 'application/json' });
      return res.end('{"errors":["try again"]}');
    }
    const json = (value: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path === '/.well-known/terraform.json')
      return json({ 'providers.v1': '/v1/providers/', ...(options.modules ? { 'modules.v1': options.modules } : {}) });
    const find = (ns: string, type: string) => releases.find((r) => r.namespace === ns && r.type === type);
    let m = /^\/v1\/providers\/([^/]+)\/([^/]+)\/versions$/.exec(path);
    if (m && find(m[1]!, m[2]!)) {
      const r = find(m[1]!, m[2]!)!;
      return json({
        versions: Object.entries(r.versions).map(([version, platforms]) => ({
          version,
          protocols: ['5.0'],
          platforms: platforms.map((p) => ({ os: p.split('_')[0], arch: p.split('_')[1] })),
        })),
      });
    }
    m = /^\/v1\/providers\/([^/]+)\/([^/]+)\/([^/]+)\/download\/([^/]+)\/([^/]+)$/.exec(path);
    if (m && find(m[1]!, m[2]!)?.versions[m[3]!]?.includes(`${m[4]}_${m[5]}`)) {
      const [type, version, platform] = [m[2]!, m[3]!, `${m[4]}_${m[5]}`];
      const base = `/files/${type}/${version}/`;
      return json({
        protocols: ['5.0'],
        os: m[4],
        arch: m[5],
        filename: zipName(type, version, platform),
        // Relative, as registries may write them: resolved against this document's URL.
        download_url: `${base}${zipName(type, version, platform)}`,
        shasums_url: `${upstream.url}files/${type}/${version}/terraform-provider-${type}_${version}_SHA256SUMS`,
        shasums_signature_url: `${base}terraform-provider-${type}_${version}_SHA256SUMS.sig`,
        shasum: sha256(published(type, version, platform)),
        signing_keys: { gpg_public_keys: [{ key_id: keyId, ascii_armor: listed.publicKey.armor(), trust_signature: '', source: 'Test', source_url: null }] },
      });
    }
    m = /^\/files\/([^/]+)\/([^/]+)\/(.+)$/.exec(path);
    const release = m ? releases.find((r) => r.type === m[1] && r.versions[m[2]!]) : undefined;
    if (m && release) {
      const [type, version, file] = [m[1]!, m[2]!, m[3]!];
      const id = `${type}/${version}`;
      if (file.endsWith('_SHA256SUMS')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end(sums(release, version));
      }
      if (file.endsWith('_SHA256SUMS.sig')) {
        const signed = faults.badSignature.has(id) ? Buffer.concat([sums(release, version), Buffer.from('tampered\n')]) : sums(release, version);
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(await sign(signed, faults.unlistedKey.has(id) ? other.privateKey : listed.privateKey));
      }
      const platform = /_([a-z0-9]+_[a-z0-9]+)\.zip$/.exec(file)?.[1];
      if (platform && zips.has(file)) {
        const pkg = `${id}/${platform}`;
        let data = faults.wrongZip.has(pkg) ? wrong : published(type, version, platform);
        if (faults.truncated.has(pkg)) data = data.subarray(0, data.length >> 1);
        res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(data.length) });
        if (faults.stall.has(file)) {
          res.write(data.subarray(0, data.length >> 1));
          upstream.onStall(file);
          return;
        }
        return res.end(data);
      }
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"errors":["Not Found"]}');
  };
  const server: Server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  upstream.close = () => {
    server.closeAllConnections();
    server.close();
  };
  return upstream;
}
