// A server over a copy of the sample data folder, and a JSON:API client.

import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { RunningServer, ServeOptions } from '../../src/serve/index.js';
import { ROOT, runCli, serveMirror, tempDir, writeFiles } from '../helpers.js';

export const TOKENS = {
  admin: 'mm.sample-admin-token',
  user: 'mm.sample-user-token',
  team: 'mm.sample-team-token',
  organization: 'mm.sample-org-token',
  unknown: 'mm.not-a-token',
  none: undefined,
} as const;
export type Caller = keyof typeof TOKENS;

export interface Harness {
  dir: string;
  data: string;
  server: RunningServer;
  call(
    caller: Caller,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Record<string, unknown>; json: any; text: string }>;
}

/** A tiny built mirror (serve needs one) and a fresh copy of the repository's sample data. */
export async function startHarness(options: Partial<ServeOptions> = {}): Promise<Harness> {
  const dir = tempDir('mm-mgmt-');
  writeFiles(dir, { 'mods/a/b/c/1.0.0/main.tf': 'variable "x" {}\n' });
  const built = await runCli(['build', '--modules', 'mods', '--mirror', 'dist', '--json'], dir);
  if (built.code !== 0) throw new Error(built.stderr);
  const data = join(dir, 'data');
  cpSync(join(ROOT, 'data'), data, { recursive: true, filter: (src) => !src.endsWith('downloads.json') });
  const server = await serveMirror(dir, { dataDir: data, ...options });
  return {
    dir,
    data,
    server,
    async call(caller, method, path, body, headers = {}) {
      const token = TOKENS[caller];
      const res = await request(new URL(path, server.url), {
        method: method as 'GET',
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/vnd.api+json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.body.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, headers: res.headers, json, text };
    },
  };
}
