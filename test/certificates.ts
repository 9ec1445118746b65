// The tests' TLS certificates: a CA and a server certificate for 127.0.0.1
// and localhost, made with openssl. Made once per test run (vitest.config.ts
// runs this file's setup before the test files, which copy the result), as
// each set costs two RSA keys (~0.7 s of CPU) and a dozen test files need one.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

export interface Certificates {
  ca: string;
  cert: string;
  key: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder holding the run's certificates (ca.pem, server.pem, server.key). */
    certificatesDir: string;
  }
}

const FILES = { ca: 'ca.pem', cert: 'server.pem', key: 'server.key' } as const;

/** Makes a CA and a server certificate for 127.0.0.1 in `dir`, valid for a day. */
export function makeCertificatesIn(dir: string): Certificates {
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=modmirror test CA', '-keyout', 'ca.key', '-out', FILES.ca]);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', FILES.key, '-out', 'server.csr']);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    FILES.ca,
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'san.ext',
    '-out',
    FILES.cert,
  ]);
  return { ca: join(dir, FILES.ca), cert: join(dir, FILES.cert), key: join(dir, FILES.key) };
}

/** Copies the certificates in `from` into `dir`. */
export function copyCertificates(from: string, dir: string): Certificates {
  for (const name of Object.values(FILES)) copyFileSync(join(from, name), join(dir, name));
  return { ca: join(dir, FILES.ca), cert: join(dir, FILES.cert), key: join(dir, FILES.key) };
}

/** vitest's global setup: the run's certificates, removed when the run ends. */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'mm-certificates-'));
  makeCertificatesIn(dir);
  project.provide('certificatesDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
