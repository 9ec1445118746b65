// modmirror dev (benchmark `dev`): from saving a file of a 100-version
// folder tree (10 modules × 10 versions, the corpus's files) to the browse
// page's event saying the rebuild is served, then the changed document
// read, against a build of the same tree with nothing changed (the cheapest
// incremental build there is), measured in the same run.

import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpusSnapshots } from './corpus/index.mjs';
import { log, makeTempDir, median, removeTempDir, runCommand } from './util.mjs';

const CLI = fileURLToPath(new URL('../bin/modmirror.js', import.meta.url));
const SEED = 20240501;
const TARGET_SECONDS = 1;

export async function benchDev({ quick = false } = {}) {
  const runs = quick ? 3 : 7;
  const tmp = makeTempDir();
  let dev;
  try {
    const tree = join(tmp, 'modules');
    const first = await writeTree(tree);
    // The baseline: a build of the tree with nothing changed, as a process, after the one that built it.
    const out = join(tmp, 'built');
    await runCommand(process.execPath, [CLI, 'build', '--modules', tree, '--mirror', out, '--json'], { cwd: tmp });
    const noop = [];
    for (let i = 0; i < runs; i++) {
      const { stdout, seconds } = await runCommand(process.execPath, [CLI, 'build', '--modules', tree, '--mirror', out, '--json'], { cwd: tmp });
      if (!JSON.parse(stdout.toString('utf8')).upToDate) throw new Error('the build with nothing changed was not up to date');
      noop.push(seconds);
    }

    dev = await startDev(tmp, tree);
    const events = await eventStream(dev.url);
    const saves = [];
    for (let i = 0; i < runs; i++) {
      const marker = `saved_${i}`;
      const seen = events.next();
      const started = performance.now();
      await writeFile(join(first.dir, 'bench.tf'), `variable "${marker}" {\n  default = ${i}\n}\n`);
      const state = await seen;
      if (state.errors.length > 0) throw new Error(`dev reported errors: ${JSON.stringify(state.errors)}`);
      const detail = await get(new URL(`v1/modules/${first.key}/${first.version}`, dev.url));
      if (!detail.includes(marker)) throw new Error(`the rebuilt detail document does not show ${marker}`);
      saves.push((performance.now() - started) / 1000);
    }
    events.close();
    const m = median(saves);
    const baseline = median(noop);
    log(
      `dev: save to event and document ${saves.map((s) => s.toFixed(2)).join(', ')} s; build with nothing changed ${noop.map((s) => s.toFixed(2)).join(', ')} s`,
    );
    return [
      {
        name: 'dev: save to page event, 100-version tree (vs build with nothing changed)',
        modmirror: m,
        baseline,
        ratio: m / baseline,
        target: `≤ ${TARGET_SECONDS} s`,
        unit: 's',
        pass: m <= TARGET_SECONDS,
        detail: { runs: saves, baselineRuns: noop },
      },
    ];
  } finally {
    if (dev) {
      dev.child.kill('SIGTERM');
      await dev.exited;
    }
    removeTempDir(tmp);
  }
}

/** The corpus's 10 modules × 10 versions as NAMESPACE/NAME/PROVIDER/VERSION folders; returns the first version's folder. */
async function writeTree(tree) {
  const snapshots = corpusSnapshots({ modules: 10, versionsPerModule: 10, seed: SEED });
  let first;
  for (const { repo, tag, files } of snapshots) {
    const name = repo.replace(/^terraform-aws-/, '');
    const version = tag.replace(/^v/, '');
    const dir = join(tree, 'bench', name, 'aws', version);
    first ??= { dir, key: `bench/${name}/aws`, version };
    for (const [path, content] of files) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    }
  }
  return first;
}

/** `modmirror dev` over the tree, once it prints its URL. */
function startDev(cwd, tree) {
  const child = spawn(process.execPath, [CLI, 'dev', '--modules', tree, '--port', '0'], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let stdout = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d.toString();
      const match = / at (http:\/\/\S+)/.exec(stdout);
      if (match) resolve({ child, exited, url: match[1] });
    });
    child.on('exit', () => reject(new Error(`dev exited: ${stdout}`)));
  });
}

/** dev's event stream: `next()` resolves with the next build's state after the one it sent on connecting. */
function eventStream(url) {
  return new Promise((resolve, reject) => {
    const waiting = [];
    let connected = false;
    const req = request(new URL('_dev/events', url), (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(message)?.[1];
          if (data === undefined) continue;
          if (!connected) {
            connected = true;
            resolve({ next: () => new Promise((r) => waiting.push(r)), close: () => req.destroy() });
          } else waiting.shift()?.(JSON.parse(data));
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function get(url) {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
}
