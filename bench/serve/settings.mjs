// What every serve benchmark shares: the CLI it runs, the seed its data is
// drawn from, where servers listen, the load, and the targets it checks.

import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/modmirror.js', import.meta.url));
export const SEED = 20240601;
export const HOST = '127.0.0.1';
export const CONNECTIONS = 10;

export const FILE_TARGET = 0.5; // versions, detail: ≥ 0.5× the ceiling
export const DYNAMIC_TARGET = 0.3; // list, search: ≥ 0.3× the ceiling
export const P99_TARGET_MS = 5; // list, search
export const RSS_TARGET_MB = 200; // the server's memory at 10k modules × 10 versions
export const API_TARGET = 0.2; // management API: ≥ 0.2× the ceiling
export const BUILD_PEAK_TARGET_MB = 500; // the build's peak memory
export const BUILD_100K_PEAK_TARGET_MB = 400; // the build's peak memory at 100,000 versions (serve-memory)
export const REGISTRY_RSS_TARGET_MB = 300; // the server's memory at 400,000 versions, the size of a whole public registry
export const METRICS_TARGET = 0.95; // serve's throughput with metrics on ≥ 0.95× with them off
export const USAGE_TARGET = 1.05; // usage recording adds ≤ 5% to the cost of a signed archive download
