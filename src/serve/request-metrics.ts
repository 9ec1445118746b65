// The per-request metrics (requests, their latency, the body bytes sent),
// kept as plain numbers per route class and written out in Prometheus's text
// format (0.0.4) only when scraped. They are updated on every request, where
// prom-client's labelled metrics cost most of a microsecond (a label object,
// its hash string and its validation per update; a `.labels()` child still
// hashes each time): here an update is a Map lookup and a few additions, a
// few tens of nanoseconds. Everything else /metrics shows is updated rarely
// and stays in prom-client (metrics.ts).

/** Registry answers take milliseconds, archives up to seconds: buckets from 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The methods counted by name; any other counts as "other", so a client cannot make up series. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const METHOD_LABELS = [...METHODS, 'other'];
const SLOTS = METHOD_LABELS.length;

/** One route class's requests since the server started. */
interface RouteCell {
  /** Requests by status and method: the key is `status * SLOTS + method's index`. */
  answered: Map<number, number>;
  /** Requests per latency bucket (not cumulative); the last one is past the largest bound. */
  buckets: number[];
  count: number;
  seconds: number;
  bodyBytes: number;
}

const FAMILIES = {
  requests: {
    name: 'modmirror_http_requests_total',
    help: 'HTTP requests answered, by route class, method and status code.',
  },
  latency: {
    name: 'modmirror_http_request_duration_seconds',
    help: 'Time from a request to its last byte handed to the connection (or its close), by route class.',
  },
  bytes: {
    name: 'modmirror_http_response_body_bytes_total',
    help: 'Response body bytes sent (after compression, without headers), by route class.',
  },
};

export class RequestMetrics {
  /** Route classes are a fixed set (routes/index.ts and what answers before routing), so this stays small. */
  private readonly cells = new Map<string, RouteCell>();

  add(route: string, method: string, status: number, seconds: number, bodyBytes: number): void {
    let cell = this.cells.get(route);
    if (cell === undefined) {
      cell = { answered: new Map(), buckets: new Array<number>(LATENCY_BUCKETS.length + 1).fill(0), count: 0, seconds: 0, bodyBytes: 0 };
      this.cells.set(route, cell);
    }
    const slot = METHODS.indexOf(method);
    const key = status * SLOTS + (slot === -1 ? SLOTS - 1 : slot);
    cell.answered.set(key, (cell.answered.get(key) ?? 0) + 1);
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    cell.buckets[bucket]!++;
    cell.count++;
    cell.seconds += seconds;
    cell.bodyBytes += bodyBytes;
  }

  /** The three families in the text exposition format, each with its HELP and TYPE lines. */
  text(): string {
    const requests = header(FAMILIES.requests, 'counter');
    const latency = header(FAMILIES.latency, 'histogram');
    const bytes = header(FAMILIES.bytes, 'counter');
    for (const [route, cell] of this.cells) {
      const r = `route="${escapeLabel(route)}"`;
      for (const [key, n] of cell.answered) {
        requests.push(`${FAMILIES.requests.name}{${r},method="${METHOD_LABELS[key % SLOTS]}",status="${Math.floor(key / SLOTS)}"} ${n}`);
      }
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((bound, i) => {
        cumulative += cell.buckets[i]!;
        latency.push(`${FAMILIES.latency.name}_bucket{${r},le="${bound}"} ${cumulative}`);
      });
      latency.push(
        `${FAMILIES.latency.name}_bucket{${r},le="+Inf"} ${cell.count}`,
        `${FAMILIES.latency.name}_sum{${r}} ${cell.seconds}`,
        `${FAMILIES.latency.name}_count{${r}} ${cell.count}`,
      );
      // A route that has sent no body yet has no bytes series.
      if (cell.bodyBytes > 0) bytes.push(`${FAMILIES.bytes.name}{${r}} ${cell.bodyBytes}`);
    }
    return [requests, latency, bytes].map((lines) => `${lines.join('\n')}\n`).join('\n');
  }
}

const header = ({ name, help }: { name: string; help: string }, type: string) => [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];

/** The text format's escapes in a label value: backslash, double quote, line feed. */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}
