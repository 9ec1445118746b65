// Compiles test/clients/module-install with Debian's Go against Debian's copies
// of the libraries Terraform uses (GOPATH mode over /usr/share/gocode, no
// network), once per machine rather than once per test: the binary is kept
// under os.tmpdir() keyed by a hash of its .go files, `go version` and the
// library folders, so a second run finds it and costs a hash. Go's own build cache
// sits beside it, so an edited client recompiles only itself.
//
// Measured on the 2-core CI machine: a fresh machine compiles in 15-27 s
// (17.5 s when idle; about 100 MB of Go build cache), which is what the
// client adds to `npm test`; a second run finds the binary in about 8 ms.
// An edited client, with the Go cache warm, recompiles in under 2 s.
//
// vitest runs test files in parallel, and two of them may ask at once: one
// takes a lock (mkdir is atomic), the others wait for it, and the binary is
// written under a temporary name and renamed into place, so nobody runs half
// a file. A lock left by a killed run is taken over once its pid is gone.

import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const SOURCE = join(import.meta.dirname, 'module-install');
const GOCODE = '/usr/share/gocode';
const LIBRARIES = ['terraform-svchost/disco', 'terraform-svchost/auth', 'go-getter', 'go-version', 'go-cleanhttp'].map((l) => join(GOCODE, 'src/github.com/hashicorp', l));
const CACHE = join(tmpdir(), 'modmirror-go-clients');

// Debian's packages build offline in GOPATH mode; flags from the caller's
// environment (GOFLAGS=-mod=..., a module proxy) would only get in the way.
// Without a C compiler, cgo is turned off (Go's own DNS and user lookups);
// with one, Go's default, which reuses Debian's precompiled standard library
// and compiles in about 17 s instead of 21 s.
const hasCc = (process.env['PATH'] ?? '').split(':').some((d) => existsSync(join(d, 'gcc')) || existsSync(join(d, 'cc')));
const GO_ENV = { ...process.env, GO111MODULE: 'off', GOPATH: GOCODE, GOPROXY: 'off', GOFLAGS: '', GOCACHE: join(CACHE, 'gocache'), ...(hasCc ? {} : { CGO_ENABLED: '0' }) };

export interface BuiltClient {
  path: string;
  /** Milliseconds spent compiling, 0 when the cached binary was used. */
  compileMs: number;
}

let pending: Promise<BuiltClient> | undefined;

/** The module-install binary, compiled if this machine has not got it yet. */
export function moduleInstallClient(): Promise<BuiltClient> {
  pending ??= build();
  return pending;
}

function cacheKey(): string {
  let goVersion: string;
  try {
    goVersion = execFileSync('go', ['version'], { env: GO_ENV, encoding: 'utf8' });
  } catch {
    throw new Error('Go is missing: the module-install test client is compiled with Debian\'s golang-go. Run `bash .ci/deps` (as root) or apt-get install golang-go.');
  }
  const missing = LIBRARIES.filter((l) => !existsSync(l));
  if (missing.length > 0) {
    throw new Error(`Debian's Go libraries are missing (${missing.join(', ')}). Run \`bash .ci/deps\` (as root) to install golang-github-hashicorp-{terraform-svchost,go-getter,go-version}-dev.`);
  }
  const hash = createHash('sha256').update(goVersion);
  for (const f of readdirSync(SOURCE).filter((n) => n.endsWith('.go')).sort()) hash.update(`${f}\n`).update(readFileSync(join(SOURCE, f)));
  // A library folder's mtime changes when dpkg replaces its files.
  for (const l of LIBRARIES) hash.update(`${l} ${statSync(l).mtimeMs}\n`);
  return hash.digest('hex').slice(0, 16);
}

async function build(): Promise<BuiltClient> {
  mkdirSync(CACHE, { recursive: true });
  const path = join(CACHE, `module-install-${cacheKey()}`);
  const lock = `${path}.lock`;
  for (;;) {
    if (existsSync(path)) return { path, compileMs: 0 };
    if (takeLock(lock)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  try {
    if (existsSync(path)) return { path, compileMs: 0 };
    const started = Date.now();
    const temp = `${path}.${process.pid}.tmp`;
    try {
      await promisify(execFile)('go', ['build', '-o', temp, '.'], { cwd: SOURCE, env: GO_ENV, timeout: 600_000 });
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(`compiling test/clients/module-install failed:\n${e.stderr || e.message}`);
    }
    renameSync(temp, path);
    // Binaries of earlier versions of the client are 20 MB each: keep one.
    for (const old of readdirSync(CACHE).filter((n) => /^module-install-[0-9a-f]{16}$/.test(n) && join(CACHE, n) !== path)) rmSync(join(CACHE, old), { force: true });
    const compileMs = Date.now() - started;
    // Said once per machine, so the cost of a fresh checkout shows in the log.
    console.info(`module-install: compiled in ${(compileMs / 1000).toFixed(1)} s, kept as ${path}`);
    return { path, compileMs };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Takes the lock folder, or a stale one whose owner is gone; false when someone alive holds it. */
function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    return true;
  } catch {
    let owner: number;
    try {
      owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    } catch {
      // Its owner is between mkdir and writing the pid, or died there.
      if (!lockOlderThan(lock, 10_000)) return false;
      owner = NaN;
    }
    if (!Number.isNaN(owner) && alive(owner)) return false;
    rmSync(lock, { recursive: true, force: true });
    return false; // the next round takes it, or sees who did
  }
}

function lockOlderThan(lock: string, ms: number): boolean {
  try {
    return Date.now() - statSync(lock).mtimeMs > ms;
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
