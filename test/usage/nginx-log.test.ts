// `modmirror usage --from-log`: a static host's nginx access log (the
// default combined format) read as downloads by client network.

import { expect, it } from 'vitest';
import { networkOf } from '../../src/usage/nginx-log.js';
import { runCli, tempDir, writeFiles } from '../helpers.js';

const line = (address: string, time: string, request: string, status: number) =>
  `${address} - - [${time}] "${request}" ${status} 1234 "-" "Go-http-client/1.1"`;

it('counts whole archive GETs by network and UTC day, skipping other requests and saying how many lines it could not read', async () => {
  const dir = tempDir();
  const archive = '/v1/modules/acme/net/aws/1.0.0/net-aws-1.0.0.tar.gz';
  writeFiles(dir, {
    'access.log': [
      line('192.0.2.10', '01/May/2025:23:30:00 -0200', `GET ${archive} HTTP/1.1`, 200),
      line('192.0.2.77', '02/May/2025:09:00:00 +0000', `GET ${archive}?archive=tar.gz HTTP/1.1`, 200),
      line('2001:db8:aa:1::5', '02/May/2025:10:00:00 +0000', `GET /mirror${archive} HTTP/2.0`, 200),
      line('198.51.100.1', '02/May/2025:10:00:00 +0000', `HEAD ${archive} HTTP/1.1`, 200),
      line('198.51.100.1', '02/May/2025:10:00:00 +0000', `GET ${archive} HTTP/1.1`, 404),
      line('198.51.100.1', '02/May/2025:10:00:00 +0000', 'GET /v1/modules/acme/net/aws/versions HTTP/1.1', 200),
      line('198.51.100.1', '02/May/2025:10:00:00 +0000', 'GET /v1/modules/acme/net/aws/1.0.0/other.tar.gz HTTP/1.1', 200),
      'not a log line',
      '',
    ].join('\n'),
  });
  const result = await runCli(['usage', '--from-log', 'access.log', '--json'], dir);
  expect(result.code).toBe(0);
  expect(result.stderr).toMatch(/warning: 1 line of access\.log not in nginx's combined format, skipped/);
  expect(JSON.parse(result.stdout).usage).toEqual([
    { module: 'acme/net/aws', version: '1.0.0', network: '192.0.2.0/24', downloads: 2, firstDay: '2025-05-02', lastDay: '2025-05-02' },
    { module: 'acme/net/aws', version: '1.0.0', network: '2001:db8:aa::/48', downloads: 1, firstDay: '2025-05-02', lastDay: '2025-05-02' },
  ]);
  const text = await runCli(['usage', '--from-log', 'access.log', '--since', '2025-05-03'], dir);
  expect(text.stdout.trim()).toBe('No downloads recorded since 2025-05-03.');
  const missing = await runCli(['usage', '--from-log', 'nothing.log'], dir);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/The access log "nothing\.log" \(--from-log\) does not exist/);
});

it('groups addresses by /24 and /48', () => {
  expect(networkOf('203.0.113.200')).toBe('203.0.113.0/24');
  expect(networkOf('2001:db8::1')).toBe('2001:db8:0::/48');
  expect(networkOf('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1::/48');
  expect(networkOf('unix:')).toBe('unix:');
});
