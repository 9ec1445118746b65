// `modmirror hosting` through the CLI, and the `_headers` file `hosting
// headers` writes and every later write keeps: what each host gets told
// (nginx, Caddy, CloudFront, _headers), and the mistakes refused.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir, writeFiles } from '../helpers.js';

const dir = tempDir();

beforeAll(async () => {
  writeFiles(dir, {
    'mirror.config.yaml': 'sources:\n  - folder: mods\n',
    'mods/acme/net/aws/1.0.0/main.tf': 'variable "a" {}\n',
    'mods/acme/net/aws/1.1.0/main.tf': 'variable "b" {}\n',
    'mods/beta/dns/google/0.1.0/main.tf': 'variable "c" {}\n',
    'drop/acme/net/aws/1.2.0/main.tf': 'variable "d" {}\n',
  });
  expect((await runCli(['build'], dir)).code).toBe(0);
  expect((await runCli(['build', '--mirror', 'abs', '--base-url', 'https://mirror.example.com/tf/'], dir)).code).toBe(0);
  // A build writes none: the mirror gets one when asked.
  expect(existsSync(join(dir, 'dist/_headers'))).toBe(false);
  for (const mirror of ['dist', 'abs']) {
    const written = await runCli(['hosting', 'headers', '--mirror', mirror], dir);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toContain(`Wrote ${join(dir, mirror, '_headers')} (3 module versions)`);
  }
});

/** The rule blocks of a _headers file, path -> headers. */
function rules(text: string): Map<string, Record<string, string>> {
  const map = new Map<string, Record<string, string>>();
  let current: Record<string, string> | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    if (!line.startsWith(' ')) map.set(line, (current = {}));
    else {
      const [name, ...value] = line.trim().split(': ');
      current![name!] = value.join(': ');
    }
  }
  return map;
}

describe('the _headers file', () => {
  it('gives each download the location its download file holds, and JSON types to extension-less files', async () => {
    const headers = rules(readFileSync(join(dir, 'dist/_headers'), 'utf8'));
    for (const [key, version] of [
      ['acme/net/aws', '1.0.0'],
      ['acme/net/aws', '1.1.0'],
      ['beta/dns/google', '0.1.0'],
    ]) {
      const rel = `v1/modules/${key}/${version}/download`;
      const body = JSON.parse(readFileSync(join(dir, 'dist', rel), 'utf8')) as { location: string };
      expect(headers.get(`/${rel}`)).toEqual({
        'Content-Type': 'application/json',
        'Cache-Control': 'public, max-age=60',
        'X-Terraform-Get': body.location,
        'X-Service-Get': body.location,
      });
    }
    expect(headers.get('/v1/modules/:namespace/:name/:provider/versions')).toMatchObject({ 'Content-Type': 'application/json' });
    expect(headers.get('/v2/modules/:namespace/:name/:provider/downloads/summary')).toMatchObject({ 'Content-Type': 'application/json' });
    expect(headers.get('/*')).toEqual({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'X-Terraform-Get, X-Service-Get' });
  });

  it('uses absolute locations and the base path when the mirror has a base URL', () => {
    const headers = rules(readFileSync(join(dir, 'abs/_headers'), 'utf8'));
    expect(headers.get('/tf/v1/modules/acme/net/aws/1.1.0/download')?.['X-Terraform-Get']).toBe(
      'https://mirror.example.com/tf/v1/modules/acme/net/aws/1.1.0/net-aws-1.1.0.tar.gz',
    );
  });

  it('is rewritten by publish to list the new version, as hosting headers would write it, and kept by a clean build', async () => {
    const published = await runCli(['publish', '--source', 'drop/acme/net/aws/1.2.0'], dir);
    expect(published.code).toBe(0);
    const text = readFileSync(join(dir, 'dist/_headers'), 'utf8');
    expect(rules(text).get('/v1/modules/acme/net/aws/1.2.0/download')?.['X-Terraform-Get']).toBe('./net-aws-1.2.0.tar.gz');
    expect((await runCli(['verify', '--mirror', 'dist'], dir)).code).toBe(0);
    const again = await runCli(['hosting', 'headers'], dir);
    expect(again.stdout).toContain('_headers is up to date (4 module versions)');
    const json = await runCli(['hosting', 'headers', '--json'], dir);
    expect([json.stderr, JSON.parse(json.stdout)]).toEqual([
      '',
      { host: 'headers', mirror: join(dir, 'dist'), file: join(dir, 'dist/_headers'), versions: 4, changed: false },
    ]);
    expect((await runCli(['build', '--clean'], dir)).code).toBe(0);
    expect(readFileSync(join(dir, 'dist/_headers'), 'utf8')).toBe(text); // A derived file like any other: verify --repair writes it again.
    writeFiles(dir, { 'dist/_headers': 'stale\n' });
    const repaired = await runCli(['verify', '--mirror', 'dist', '--repair', '--json'], dir);
    expect(JSON.parse(repaired.stdout).repaired).toEqual(['_headers']);
    expect(readFileSync(join(dir, 'dist/_headers'), 'utf8')).toBe(text);
  });

  it('is not started by a write into a mirror without one', async () => {
    expect((await runCli(['build', '--mirror', 'plain'], dir)).code).toBe(0);
    expect((await runCli(['publish', '--source', 'drop/acme/net/aws/1.2.0', '--mirror', 'plain'], dir)).code).toBe(0);
    expect(existsSync(join(dir, 'plain/_headers'))).toBe(false);
  });
});

describe('modmirror hosting', () => {
  it('prints an nginx server block for the mirror, with the download rule and the locations the mirror was built with', async () => {
    const relative = await runCli(['hosting', 'nginx', '--mirror', 'dist', '--listen', '127.0.0.1:8088'], dir);
    expect(relative.code).toBe(0);
    expect(relative.stdout).toMatch(/^server \{$/m);
    expect(relative.stdout).toContain('listen 127.0.0.1:8088;');
    expect(relative.stdout).toContain(`root "${join(dir, 'dist')}";`);
    expect(relative.stdout).toContain('add_header X-Terraform-Get "./$mm_name-$mm_provider-$mm_version.tar.gz";');
    expect(relative.stdout).toContain('try_files $uri $uri/index.json $uri/index.html =404;');

    const absolute = await runCli(['hosting', 'nginx', '--mirror', 'abs'], dir);
    expect(absolute.stdout).toContain('listen 80;');
    expect(absolute.stdout).toContain(
      'add_header X-Terraform-Get "https://mirror.example.com/tf/v1/modules/$mm_namespace/$mm_name/$mm_provider/$mm_version/$mm_name-$mm_provider-$mm_version.tar.gz";',
    );
    expect(absolute.stdout).toContain('rewrite "^/tf(/.*)$" $1 break;');
  });

  it('prints the equivalent Caddyfile site block', async () => {
    const caddy = await runCli(['hosting', 'caddy', '--listen', '127.0.0.1:8089'], dir);
    expect(caddy.code).toBe(0);
    expect(caddy.stdout).toMatch(/^http:\/\/:8089 \{$/m);
    expect(caddy.stdout).toContain('\tbind 127.0.0.1');
    expect(caddy.stdout).toContain('header @download X-Terraform-Get "./{re.download.2}-{re.download.3}-{re.download.4}.tar.gz"');
    expect(caddy.stdout).toContain('try_files {path} {path}/index.json {path}/index.html');
    // Provider zips of the network mirror: their type and a long cache life (encode leaves application/zip alone).
    expect(caddy.stdout).toContain('\t@provider_zip path *.zip\n\theader @provider_zip Content-Type application/zip');
    expect(caddy.stdout).toContain('\t@archive path *.tar.gz *.zip\n\theader @archive Cache-Control "public, max-age=31536000, immutable"');
  });

  it('prints the CloudFront viewer-response function, whose header is the location the download file holds', async () => {
    type Handler = (event: unknown) => { headers: Record<string, { value: string }> };
    const file = 'tf/v1/modules/acme/net/aws/1.1.0/download';
    for (const [mirror, uri] of [
      ['dist', `/${file.slice(3)}`],
      ['abs', `/${file}`],
    ] as const) {
      const printed = await runCli(['hosting', 'cloudfront', '--mirror', mirror], dir);
      expect(printed.code, printed.stderr).toBe(0);
      expect(printed.stdout).toMatch(/^function handler\(event\) \{$/m);
      // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the printed function as CloudFront would
      const handler = new Function(`${printed.stdout}\nreturn handler;`)() as Handler;
      const { location } = JSON.parse(readFileSync(join(dir, mirror, file.slice(3)), 'utf8')) as { location: string };
      const out = handler({ request: { uri }, response: { statusCode: 200, headers: {} } });
      expect(out.headers['x-terraform-get'], mirror).toEqual({ value: location });
    }
  });

  it('takes the base URL from the config before the mirror is built, and warns when a flag disagrees with the files', async () => {
    writeFiles(dir, { 'other.yaml': 'baseUrl: https://cfg.example.com/\nsources:\n  - folder: mods\n' });
    const fromConfig = await runCli(['hosting', 'nginx', '--mirror', 'not-built', '--config', 'other.yaml'], dir);
    expect(fromConfig.code).toBe(0);
    expect(fromConfig.stderr).toMatch(/holds no built mirror yet/);
    expect(fromConfig.stdout).toContain('"https://cfg.example.com/v1/modules/$mm_namespace');

    const disagreeing = await runCli(['hosting', 'nginx', '--mirror', 'dist', '--base-url', 'https://elsewhere.example.com'], dir);
    expect(disagreeing.code).toBe(0);
    expect(disagreeing.stderr).toMatch(/was built with relative locations; the download header will not match/);
  });

  it('refuses unknown hosts, bad addresses and paths a configuration cannot quote', async () => {
    const cases: [string[], RegExp][] = [
      [['hosting'], /Name the host/],
      [['hosting', 'apache'], /Unknown host "apache"/],
      [['hosting', 'nginx', '--listen', 'localhost:99999'], /Invalid --listen/],
      [['hosting', 'nginx', '--listen', '1.2.3.4:80; evil'], /Invalid --listen/],
      [['hosting', 'nginx', '--mirror', 'di$st'], /cannot quote/],
      [['hosting', 'headers', '--base-url', 'https://elsewhere.example.com'], /--base-url does not apply to hosting headers/],
      [['hosting', 'headers', '--mirror', 'not-built'], /There is no built mirror at not-built/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, dir);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });
});
