// The sign-in page as a person meets it, in Debian's Chromium: Terraform
// opens it in the browser, the person signs in, and the browser is sent back
// to Terraform's loopback port with the code (a listener the test starts on a
// port of the protocol's range, as Terraform does).

import { createServer } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../browse/chromium.js';
import { authzQuery, exchange, PASSWORD, pkce, startLoginSite, tokenForm, type LoginSite } from './flow.js';

let site: LoginSite;
let browser: Browser;
beforeAll(async () => {
  site = await startLoginSite();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await site?.server.close();
});

/** Terraform's listener: a server on the first free loopback port of the protocol's range, noting each request. */
async function terraformListener(): Promise<{ port: number; received: URL[]; close: () => Promise<void> }> {
  const received: URL[] = [];
  const server = createServer((req, res) => {
    received.push(new URL(req.url ?? '/', `http://${req.headers.host}`));
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end('The login server has returned an authentication code to Terraform.');
  });
  for (let port = 10000; port <= 10010; port++) {
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (listening) return { port, received, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }
  throw new Error('no free port in 10000-10010 for the stand-in of terraform login');
}

/** Opens the sign-in page Terraform would, signs in as `username`, and returns where the browser was sent, if anywhere. */
async function signInWithBrowser(username: string, password: string): Promise<{ redirected?: URL; text: string }> {
  const { verifier, challenge } = pkce();
  const terraform = await terraformListener();
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const redirectUri = `http://127.0.0.1:${terraform.port}/login`;
    await page.goto(new URL(`oauth/authorization?${authzQuery(challenge, { redirect_uri: redirectUri })}`, site.server.url).href);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(password);
    await Promise.all([page.waitForEvent('framenavigated'), page.getByRole('button', { name: 'Sign in' }).click()]);
    await page.waitForLoadState('load');
    const text = await page.locator('body').innerText();
    const redirected = terraform.received[0];
    if (redirected) {
      const traded = await exchange(site, tokenForm(redirected.searchParams.get('code')!, verifier, { redirect_uri: redirectUri }));
      expect(traded.status).toBe(200);
      expect(traded.json.access_token).toMatch(/\S{20,}/);
    }
    return { ...(redirected ? { redirected } : {}), text };
  } finally {
    await context.close();
    await terraform.close();
  }
}

it('signs a person in through the page in Chromium, and sends the browser back to Terraform with a code it trades', async () => {
  const { redirected, text } = await signInWithBrowser('alice', PASSWORD);
  expect(redirected?.searchParams.get('state')).toBe('terraform-state-1');
  expect(text).toContain('returned an authentication code');
});

it('keeps the browser on the page with a message, and sends nothing to Terraform, for a wrong password', async () => {
  const { redirected, text } = await signInWithBrowser('alice', 'not the password');
  expect(redirected).toBeUndefined();
  expect(text).toMatch(/user name or password/i);
});
