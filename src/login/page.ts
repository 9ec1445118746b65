// The sign-in page `terraform login` opens, and the pages that say why a
// sign-in cannot go on. Plain HTML with no script: every value is escaped,
// and the headers keep the page out of frames, caches and referrers.

import type { ServerResponse } from 'node:http';
import { LOGIN_AUTHZ_PATH } from '../protocol/paths.js';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem;color:#222}' +
  'label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}' +
  'button{margin-top:1rem;padding:.5rem 1.2rem}.problem{color:#a00}';

function page(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escape(title)}</title><style>${STYLE}</style></head>
<body><h1>${escape(title)}</h1>\n${body}\n</body></html>\n`;
}

export interface SignInForm {
  /** The pending authorization request the form completes. */
  request: string;
  csrf: string;
  username?: string;
  problem?: string;
  /** Where single sign-on starts, when it is set up. */
  sso?: string | undefined;
  /** Terraform's loopback address (checked before the page is shown), where the signed-in browser is sent. */
  returnTo: string;
}

export function sendSignIn(res: ServerResponse, status: number, form: SignInForm, headers: Record<string, string> = {}): void {
  const body = `<p>Terraform asks for a token for this registry. Sign in to give it one.</p>
${form.problem ? `<p class="problem" role="alert">${escape(form.problem)}</p>` : ''}
<form method="post" action="/${LOGIN_AUTHZ_PATH}">
<input type="hidden" name="request" value="${escape(form.request)}">
<input type="hidden" name="csrf" value="${escape(form.csrf)}">
<label for="username">User name</label><input type="text" id="username" name="username" autocomplete="username" required value="${escape(form.username ?? '')}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
${form.sso ? `<p>or</p>\n<p><a href="${escape(form.sso)}">Sign in with your organization's identity provider</a></p>` : ''}`;
  // A browser holds a form's redirect to the form-action rule too: Terraform's listener must be in it, or the
  // signed-in browser stays on this page and Terraform never gets its code.
  const policy = HEADERS['Content-Security-Policy'].replace("form-action 'self'", `form-action 'self' ${new URL(form.returnTo).origin}`);
  send(res, status, page('Sign in to the module registry', body), { 'Content-Security-Policy': policy, ...headers });
}

/** A page that says why the sign-in stops here, and what to do. */
export function sendProblem(res: ServerResponse, status: number, problem: string, headers: Record<string, string> = {}): void {
  send(res, status, page('Cannot sign in', `<p class="problem" role="alert">${escape(problem)}</p>`), headers);
}

function send(res: ServerResponse, status: number, html: string, headers: Record<string, string>): void {
  const body = Buffer.from(html);
  res.writeHead(status, { ...HEADERS, ...headers, 'Content-Length': String(body.length) });
  res.end(body);
}
