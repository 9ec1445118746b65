// What `modmirror dev` serves besides the mirror: the browse page with a
// flag naming the event stream (so the page connects only when dev serves
// it: a static host or `serve` never has the flag), and that stream, which
// sends the state of the preview at once and again after every rebuild. A
// flag in a <meta> element rather than a script keeps the page's
// Content-Security-Policy as it is: no inline script.

import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

/** The event stream's path, which only dev answers. */
export const DEV_EVENTS_PATH = '/_dev/events';
/** The element the page looks for: `<meta name="modmirror-dev" content="_dev/events">`. */
const FLAG = `<meta name="modmirror-dev" content="${DEV_EVENTS_PATH.slice(1)}">`;

/** A version that failed to build, as the page shows it and the terminal printed it. */
export interface DevError {
  /** `namespace/name/provider`, when a module version failed (not the config or the scan). */
  module?: string;
  version?: string;
  /** `file:line:column: message` lines (the file relative to the version), or the error's message. */
  lines: string[];
  /** HCL_SYNTAX: `lines` are files that do not parse. */
  syntax?: boolean;
  /** The version's folder, or a git version's `repo@tag`. */
  where?: string;
}

/** What the page is told after each build: which build it is, and what failed in it. */
export interface DevState {
  build: number;
  errors: DevError[];
}

export class DevEvents {
  private readonly clients = new Set<ServerResponse>();
  private state: DevState = { build: 0, errors: [] };

  /** `root`: the mirror whose browse page (index.html) dev serves with the flag. */
  constructor(private readonly root: string) {}

  /** The server's `intercept`: answers the event stream and the page, and leaves every other request to the registry. */
  readonly intercept = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === DEV_EVENTS_PATH) {
      this.stream(req, res);
      return true;
    }
    if (path !== '/' && path !== '/index.html') return false;
    let html: string;
    try {
      html = readFileSync(join(this.root, 'index.html'), 'utf8');
    } catch {
      return false;
    }
    const body = Buffer.from(html.replace('<meta charset="utf-8">', `<meta charset="utf-8">\n${FLAG}`));
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length, 'Cache-Control': 'no-cache' });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };

  /** Tells every open page the new state. */
  send(state: DevState): void {
    this.state = state;
    for (const res of this.clients) write(res, state);
  }

  /** Ends every stream, so the server can close (an open stream would hold it). */
  close(): void {
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  private stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    // A stream lives as long as its page; the server's request timeout is for requests that end.
    req.socket.setTimeout(0);
    this.clients.add(res);
    res.once('close', () => this.clients.delete(res));
    write(res, this.state);
  }
}

function write(res: ServerResponse, state: DevState): void {
  res.write(`event: build\ndata: ${JSON.stringify(state)}\n\n`);
}
