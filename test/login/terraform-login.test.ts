// `terraform login` itself, over HTTPS with the suite's test CA: Terraform
// opens the sign-in page with `xdg-open` (on Linux it looks for it on PATH),
// here a stand-in browser that fills the form in as a person would; then
// `terraform init` of a private module works with the credentials file
// terraform login wrote, and nothing else.

import { spawn } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasTerraform, makeCertificates, tempDir, terraformInit, writeFiles } from '../helpers.js';
import { PASSWORD, startLoginSite } from './flow.js';

/** Fetches the page, posts the form with its CSRF token and the cookie, and follows the redirect to Terraform's listener. */
const BROWSER = `#!/bin/bash
# Terraform waits for the browser command to return before it reads the code: sign in in the background.
(
  set -euo pipefail
  jar=$(mktemp)
  page=$(curl -sS --fail --cacert "$MM_CA" -c "$jar" -b "$jar" "$1")
  cp "$jar" "$MM_BROWSER_LOG.cookies"
  field() { sed -n "s/.*name=\\"$1\\" value=\\"\\([^\\"]*\\)\\".*/\\1/p" <<<"$page"; }
  origin=$(sed -E 's#^(https://[^/]+).*#\\1#' <<<"$1")
  action=$(sed -n 's/.*<form method="post" action="\\([^"]*\\)".*/\\1/p' <<<"$page")
  back=$(curl -sS --cacert "$MM_CA" -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' \\
    --data-urlencode "request=$(field request)" --data-urlencode "csrf=$(field csrf)" \\
    --data-urlencode "username=$MM_USER" --data-urlencode "password=$MM_PASSWORD" "$origin$action")
  curl -sS --fail "$back" >/dev/null
  echo "signed in, back to $back"
) >>"$MM_BROWSER_LOG" 2>&1 &
`;

function terraformLogin(host: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('terraform', ['login', '-no-color', host], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdin.end('yes\n');
    const timer = setTimeout(() => child.kill(), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output });
    });
  });
}

describe.skipIf(!hasTerraform)('terraform login (real client)', () => {
  it('signs in through the browser, stores the token, and terraform init of a private module works with it alone', async () => {
    const dir = tempDir('mm-tf-login-');
    const certs = makeCertificates(dir);
    const site = await startLoginSite({ tls: { cert: certs.cert, key: certs.key } });
    const host = new URL(site.server.url).host;
    // Terraform keeps the token in ~/.terraform.d/credentials.tfrc.json, and does not make the folder.
    writeFiles(dir, { 'bin/xdg-open': BROWSER, 'home/.terraform.d/.keep': '', 'empty-home/.keep': '' });
    chmodSync(join(dir, 'bin/xdg-open'), 0o755);
    const env = {
      HOME: join(dir, 'home'),
      PATH: `${join(dir, 'bin')}:${process.env['PATH']}`,
      SSL_CERT_FILE: certs.ca,
      TF_CLI_CONFIG_FILE: undefined,
      CHECKPOINT_DISABLE: '1',
      MM_CA: certs.ca,
      MM_USER: 'alice',
      MM_PASSWORD: PASSWORD,
      MM_BROWSER_LOG: join(dir, 'browser.log'),
    };

    const login = await terraformLogin(host, env);
    expect(login.output, readFileSync(env.MM_BROWSER_LOG, 'utf8')).toMatch(/Success! Terraform has obtained and saved an API token\./);
    expect(login.code).toBe(0);
    const credentials = JSON.parse(readFileSync(join(dir, 'home/.terraform.d/credentials.tfrc.json'), 'utf8'));
    const token = credentials.credentials[host].token as string;
    expect(token).toMatch(/^mm\./);
    const stored = JSON.parse(readFileSync(join(site.dir, 'data/tokens.json'), 'utf8'));
    expect(stored).toEqual([expect.objectContaining({ kind: 'user', description: 'terraform login', expiresAt: expect.any(String) })]);
    // The sign-in page's cookie, as curl kept it: HttpOnly, and Secure over HTTPS (Netscape format: the fourth field).
    const cookie = readFileSync(`${env.MM_BROWSER_LOG}.cookies`, 'utf8')
      .split('\n')
      .find((line) => line.includes('mm_login_csrf'))!;
    expect(cookie).toMatch(/^#HttpOnly_127\.0\.0\.1\t/);
    expect(cookie.split('\t')[3]).toBe('TRUE');
    // Neither secret reached a log line.
    expect(site.logs.join('\n')).not.toContain(token);
    expect(site.logs.join('\n')).not.toContain(PASSWORD);

    const init = await terraformInit(
      join(dir, 'project'),
      {
        'cli.tfrc': 'disable_checkpoint = true\n',
        'infra/main.tf': `module "hello" {\n  source  = "${host}/acme/hello/null"\n  version = "1.0.0"\n}\n`,
      },
      // No TF_CLI_CONFIG_FILE: with it, Terraform does not read its config folder, where terraform login saved the token.
      { HOME: env.HOME, SSL_CERT_FILE: certs.ca, TF_CLI_CONFIG_FILE: undefined },
    );
    expect(init.output).toMatch(/Downloading .*acme\/hello\/null 1\.0\.0/);
    expect(init.code).toBe(0);

    // Without the credentials file the same init is refused.
    const anonymous = await terraformInit(
      join(dir, 'anonymous'),
      { 'cli.tfrc': 'disable_checkpoint = true\n', 'infra/main.tf': `module "hello" {\n  source  = "${host}/acme/hello/null"\n  version = "1.0.0"\n}\n` },
      { HOME: join(dir, 'empty-home'), SSL_CERT_FILE: certs.ca, TF_CLI_CONFIG_FILE: undefined },
    );
    expect(anonymous.code).toBe(1);
  }, 120_000);
});
