// What the client tests share: the sample module's versions, running the
// module-install client, the check that it installed exactly the module's
// files, a throwaway CA, and a proxy that records what each request carried;
// running the provider clients (provider-install, provider-registry-install).

import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { treeOf, writeFiles } from '../helpers.js';
import { buildGoProgram } from './go-build.js';

/** Versions of acme/hello/null: a `~> 1.2` range must pick 1.2.3, never the 1.3.0 pre-release. */
export const VERSIONS = ['1.0.0', '1.2.0', '1.2.3', '1.3.0-rc.1', '2.0.0'];

/** Each version's files differ, so a wrong pick cannot pass a byte comparison. */
export function moduleFiles(version: string): Record<string, string> {
  const id = version.replace(/\W/g, '_');
  return {
    'main.tf': `variable "name" {\n  type = string\n}\nresource "null_resource" "v${id}" {}\n`,
    'outputs.tf': `output "version" {\n  value = "${version}"\n}\n`,
    'README.md': `# Hello ${version}\n\nA module.\n`,
    'modules/x/main.tf': `output "x" {\n  value = "${version}"\n}\n`,
    'modules/x/variables.tf': 'variable "in" {\n  default = 1\n}\n',
    'files/data.bin': `\u0000\u00ff binary ${version}\r\n`,
  };
}

/** Writes `mods/acme/hello/null/VERSION/...` for the given versions under `dir`. */
export function writeModules(dir: string, versions = VERSIONS, folder = 'mods'): void {
  const files: Record<string, string> = {};
  for (const v of versions) for (const [path, text] of Object.entries(moduleFiles(v))) files[`${folder}/acme/hello/null/${v}/${path}`] = text;
  writeFiles(dir, files);
}

export interface Installed {
  source: string;
  version: string;
  versionsUrl: string;
  downloadUrl: string;
  downloadStatus: number;
  location: string;
  package: string;
  dir: string;
  files: string[];
}

export interface InstallOptions {
  source: string;
  version?: string;
  dest: string;
  /** modules.v1 URL: a CLI config `host` block, so no discovery (plain HTTP works). */
  modulesUrl?: string;
  token?: string;
  /** PEM file Go trusts instead of the system roots. */
  ca?: string;
}

let client: ReturnType<typeof buildGoProgram> | undefined;

/** The module-install program, compiled once per machine (go-build.ts); a beforeAll asks early so no test pays for it. */
export function moduleInstallClient(): ReturnType<typeof buildGoProgram> {
  client ??= buildGoProgram(join(import.meta.dirname, 'module-install'));
  return client;
}

/** Runs the real client; resolves with its summary, or rejects with its stderr. */
export async function install(options: InstallOptions): Promise<Installed> {
  const { binary: path } = await moduleInstallClient();
  const args = ['-source', options.source, '-version', options.version ?? '', '-dest', options.dest];
  if (options.modulesUrl) args.push('-service-override', `modules.v1=${options.modulesUrl}`);
  if (options.token) args.push('-token', options.token);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: options.dest + '.home' };
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy']) delete env[k];
  if (options.ca) env['SSL_CERT_FILE'] = options.ca;
  return new Promise((resolve, reject) => {
    execFile(path, args, { env, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`module-install ${args.join(' ')}\n${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as Installed);
    });
  });
}

/** What provider-install prints of each package it installed, one JSON line each (provider-install/main.go). */
export interface InstalledProvider {
  provider: string;
  version: string;
  platform: string;
  url: string;
  file: string;
  hashes: string[];
  h1: string;
  zh: string;
  contentType: string;
  contentEncoding: string;
  executable: string;
}

/** The provider-install program (Terraform's network mirror source), compiled once per machine (go-build.ts). */
export function providerInstallClient(): ReturnType<typeof buildGoProgram> {
  return buildGoProgram(join(import.meta.dirname, 'provider-install'));
}

/**
 * Runs a provider client program trusting `ca`: what it prints, one JSON object a package installed.
 * Rejects as execFile does, with the client's stderr on the error.
 */
export async function runProviderClient<T>(binary: string, args: string[], ca: string): Promise<T[]> {
  const { stdout } = await promisify(execFile)(binary, args, { env: { ...process.env, SSL_CERT_FILE: ca } });
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as T);
}

/** provider-install: each `HOST/NAMESPACE/TYPE@VERSION:OS_ARCH` of `specs` from the network mirror at `base`, into `dest`. */
export async function installProviders(base: string, specs: string[], dest: string, ca: string): Promise<InstalledProvider[]> {
  const { binary } = await providerInstallClient();
  mkdirSync(dest, { recursive: true });
  return runProviderClient<InstalledProvider>(binary, [base, dest, ...specs], ca);
}

/** The stderr of a client run that must fail; one that succeeds fails the test. */
export async function refusal(run: Promise<unknown>): Promise<string> {
  const error = await run.then(
    () => undefined,
    (e: { stderr: string }) => e,
  );
  expect(error, 'the client should have refused').toBeDefined();
  return error!.stderr;
}

/** The installed module folder holds exactly the files of `sourceDir`, byte for byte. */
export function expectSameFiles(installed: Installed, sourceDir: string): void {
  const want = treeOf(sourceDir);
  expect(treeOf(installed.dir)).toEqual(want);
  expect(installed.files).toEqual(Object.keys(want).sort());
}

export interface Seen {
  method: string;
  path: string;
  authorization?: string;
  acceptEncoding?: string;
}

export interface RecordingProxy {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

/**
 * Forwards every request to `target` (plain HTTP) and records the headers a
 * registry cares about; over HTTPS when given a certificate, so a client's
 * real discovery can go through it.
 */
export async function recordingProxy(target: string, tls?: { cert: string; key: string }): Promise<RecordingProxy> {
  const seen: Seen[] = [];
  const upstream = new URL(target);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, acceptEncoding: req.headers['accept-encoding'] });
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  };
  const server: Server = tls ? createHttpsServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}/`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
