// Compiles one of our small Go client programs (a folder with a main
// package) with Debian's Go, offline, against the Go libraries Debian ships
// in /usr/share/gocode (GOPATH mode: those packages carry no go.sum, and
// there is no module proxy to ask). The binary is cached under os.tmpdir(),
// keyed by everything that decides its bytes, so only the first test run on
// a machine pays for the compile.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where Debian's golang-*-dev packages put their sources. */
export const DEBIAN_GOPATH = '/usr/share/gocode';

export interface GoBuild {
  binary: string;
  /** True when the binary came from the cache and nothing was compiled. */
  cached: boolean;
  /** Wall time of this call, key included. */
  seconds: number;
}

export interface GoBuildOptions {
  /** GOPATH roots with the libraries the program imports; default Debian's. */
  gopath?: string[];
  /** The cache folder; default `<tmpdir>/modmirror-go-build`. */
  cacheDir?: string;
}

/** Every file under `dir`, sorted, as [relative path, bytes]. */
function filesOf(dir: string): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push([relative(dir, path), readFileSync(path)]);
    }
  };
  walk(dir);
  return out;
}

/** Whether a C compiler is on PATH: cgo needs one (Debian's golang-go only recommends gcc). */
const hasCc = (process.env['PATH'] ?? '').split(':').some((d) => existsSync(join(d, 'gcc')) || existsSync(join(d, 'cc')));

function goEnv(gopath: string[], cacheDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GO111MODULE: 'off',
    // The first root is where Go would write; keep it ours and empty.
    GOPATH: [join(cacheDir, 'gopath'), ...gopath].join(':'),
    GOCACHE: join(cacheDir, 'gocache'),
    GOPROXY: 'off',
    GOFLAGS: '',
    // With a C compiler, Go's default (cgo), which reuses Debian's precompiled
    // standard library: a cold go-getter client compiles in ~17 s instead of
    // ~21 s. Without one, pure Go, at the price of compiling the standard library once.
    CGO_ENABLED: hasCc ? '1' : '0',
  };
}

/**
 * The cache key: our source's bytes, `go version`, and the name, size and
 * modification time of every file of every non-standard package the program
 * imports (`go list -deps`, about 0.1 s), so upgrading a Debian package
 * rebuilds. Hashing those libraries' bytes would cost more than compiling.
 */
async function cacheKey(folder: string, env: NodeJS.ProcessEnv): Promise<string> {
  const hash = createHash('sha256');
  for (const [path, bytes] of filesOf(folder)) hash.update(`${path}\0${bytes.length}\0`).update(bytes);
  hash.update((await run('go', ['version'], { env })).stdout);
  hash.update(`${env.GOPATH}\0${env.CGO_ENABLED}\n`);
  const format = '{{if not .Standard}}{{.Dir}}{{range .GoFiles}}\t{{.}}{{end}}{{end}}';
  const deps = (await run('go', ['list', '-deps', '-f', format, '.'], { cwd: folder, env })).stdout;
  for (const line of deps.split('\n').filter(Boolean)) {
    const [dir, ...files] = line.split('\t');
    if (resolve(dir!) === resolve(folder)) continue;
    for (const file of files) {
      const stat = statSync(join(dir!, file));
      hash.update(`${dir}/${file}\0${stat.size}\0${stat.mtimeMs}\n`);
    }
  }
  return hash.digest('hex').slice(0, 20);
}

/** True while the process that wrote `lock` (its pid) is alive. */
function lockHeld(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(lock, 'utf8'));
  } catch {
    return false;
  }
  // Created but not yet written: its holder is alive and about to write.
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Builds the Go program in `folder` (offline, GOPATH mode) and returns its
 * binary, from the cache when one was built from the same inputs. Several
 * test files may ask at once: the first takes a lock file and compiles, the
 * others wait for its binary rather than compile the same thing on a shared
 * machine. The lock only saves work: each compile writes its own file and
 * renames it into place, so a waiter that gives up on a dead holder's lock
 * and compiles too still ends with a whole binary.
 */
export function buildGoProgram(folder: string, options: GoBuildOptions = {}): Promise<GoBuild> {
  // Asked again by the same test file (goH1 asks per hash): the answer it had, without `go list` again (~0.5 s of CPU).
  const key = JSON.stringify([resolve(folder), options.gopath, options.cacheDir]);
  let build = builds.get(key);
  if (!build) {
    build = findOrBuild(folder, options);
    builds.set(key, build);
    build.catch(() => builds.delete(key));
  }
  return build;
}
const builds = new Map<string, Promise<GoBuild>>();

async function findOrBuild(folder: string, options: GoBuildOptions): Promise<GoBuild> {
  const started = performance.now();
  const cacheDir = options.cacheDir ?? join(tmpdir(), 'modmirror-go-build');
  const gopath = options.gopath ?? [DEBIAN_GOPATH];
  const env = goEnv(gopath, cacheDir);
  const seconds = () => Math.round(performance.now() - started) / 1000;
  try {
    await run('go', ['version'], { env });
  } catch (error) {
    throw new Error('Go is needed to build the test clients: apt-get install golang-go (see .ci/deps).', { cause: error });
  }
  mkdirSync(join(cacheDir, 'gopath'), { recursive: true });
  const binary = join(cacheDir, `${basename(folder)}-${await cacheKey(folder, env)}`);
  const lock = `${binary}.lock`;
  for (;;) {
    if (existsSync(binary)) return { binary, cached: true, seconds: seconds() };
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!lockHeld(lock)) rmSync(lock, { force: true });
    else await new Promise((r) => setTimeout(r, 200));
  }
  const partial = `${binary}.${process.pid}.${Math.random().toString(36).slice(2)}.partial`;
  try {
    await run('go', ['build', '-o', partial, '.'], { cwd: folder, env, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
    renameSync(partial, binary);
    // Binaries of earlier versions of a client are up to 20 MB each: keep the newest.
    const stale = new RegExp(`^${basename(folder)}-[0-9a-f]{20}$`);
    for (const old of readdirSync(cacheDir).filter((n) => stale.test(n) && join(cacheDir, n) !== binary)) rmSync(join(cacheDir, old), { force: true });
    // Said once per machine, so the cost of a fresh checkout shows in the log.
    console.info(`${basename(folder)}: compiled in ${seconds()} s, kept as ${binary}`);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`go build in ${folder} failed (offline, GOPATH=${env.GOPATH}):\n${stderr}`, { cause: error });
  } finally {
    rmSync(partial, { force: true });
    rmSync(lock, { force: true });
  }
  return { binary, cached: false, seconds: seconds() };
}
