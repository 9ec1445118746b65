// `modmirror usage --from-log FILE`: the same report for a mirror a static
// host serves, from its access log in nginx's default `combined` format
// (what `modmirror hosting nginx` leaves in place). A static host knows no
// organizations: downloads are reported by the client's network, its IPv4
// /24 or IPv6 /48, so a site sees which offices or build farms still fetch a
// version without the log naming one machine.

import { readFileSync } from 'node:fs';
import { MirrorError } from '../errors.js';
import type { UsageEvent } from './store.js';

/** `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent ...` */
const COMBINED = /^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+)[^"]*" (\d{3}) /;
/** NAMESPACE/NAME/PROVIDER/VERSION/NAME-PROVIDER-VERSION.tar.gz at the end of the path, under any prefix. */
const ARCHIVE = /\/([^/]+)\/([^/]+)\/([^/]+)\/([^/]+)\/([^/]+)\.tar\.gz$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export interface LogDownloads {
  events: UsageEvent[];
  /** Lines that are not in the combined format. */
  unreadable: number;
}

/** The archive downloads (GET, 200) of an nginx access log. */
export function downloadsFromLog(file: string): LogDownloads {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new MirrorError('OUTPUT_FAILED', `Cannot read the access log "${file}": ${(error as Error).message}`, {
      hint: 'Name the nginx access log of the host that serves the mirror (its access_log).',
      cause: error,
    });
  }
  const events: UsageEvent[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const m = COMBINED.exec(line);
    const day = m ? dayOf(m[2]!) : undefined;
    if (!m || day === undefined) {
      unreadable++;
      continue;
    }
    const [, address, , method, target, status] = m;
    if (method !== 'GET' || status !== '200') continue;
    const path = safeDecode(target!.split('?', 1)[0]!);
    const a = path === undefined ? null : ARCHIVE.exec(path);
    if (!a) continue;
    const [, namespace, name, provider, version, file] = a;
    // The archive's own name, so another .tar.gz under a version folder is no download.
    if (file !== `${name}-${provider}-${version}`) continue;
    events.push({ day, module: `${namespace}/${name}/${provider}`, version: version!, network: networkOf(address!) });
  }
  return { events, unreadable };
}

/** `10/Oct/2024:13:55:36 -0700` as its UTC day. */
function dayOf(local: string): string | undefined {
  const m = /^(\d{2})\/(\w{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/.exec(local);
  const month = m ? MONTHS.indexOf(m[2]!) : -1;
  if (!m || month === -1) return undefined;
  const offset = (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9])) * 60_000;
  const utc = Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6])) - offset;
  return Number.isNaN(utc) ? undefined : new Date(utc).toISOString().slice(0, 10);
}

/** An IPv4 address's /24, an IPv6 address's /48; anything else (nginx's `unix:`) as it is. */
export function networkOf(address: string): string {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.\d{1,3}$/.exec(address);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0/24`;
  if (/^[0-9a-f:]+$/i.test(address) && address.includes(':')) {
    const [head = ''] = address.split('::');
    const groups = head.split(':').filter((g) => g !== '');
    while (groups.length < 3) groups.push('0');
    return `${groups.slice(0, 3).join(':')}::/48`;
  }
  return address;
}

function safeDecode(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}
