// The bucket benchmarks' S3 server: a throwaway Ceph RGW on 127.0.0.1,
// started by test/s3/rgw.sh (as the tests start it) in a folder of the
// caller's, with an SDK client and the environment and flags the CLI needs.

import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';

const RGW = fileURLToPath(new URL('../test/s3/rgw.sh', import.meta.url));

export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Whether Ceph's radosgw, ceph-mon and ceph-osd are installed (bash .ci/deps installs them). */
export function hasCeph() {
  try {
    execFileSync('sh', ['-c', 'command -v radosgw && command -v ceph-mon && command -v ceph-osd'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts an RGW kept in `dir`; resolves with { endpoint, env, flags, client, stop }:
 * `env` the CLI's environment (credentials, no config of the machine's own),
 * `flags` the CLI flags that point at it, `stop()` stops what was started.
 */
export async function startRgw(dir) {
  const [port, web, mon] = [await freePort(), await freePort(), await freePort()];
  const stop = () => {
    try {
      execFileSync('bash', [RGW, 'stop', dir], { stdio: 'ignore' });
    } catch {
      // Nothing was started.
    }
  };
  try {
    execFileSync('bash', [RGW, 'start', dir, String(port), String(web), String(mon)], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
  } catch (error) {
    stop();
    throw error;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const credentials = { accessKeyId: 'testaccesskey', secretAccessKey: 'testsecretkey' };
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    env: {
      ...process.env,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    flags: ['--endpoint', endpoint, '--path-style'],
    client,
    stop() {
      client.destroy();
      stop();
    },
  };
}
