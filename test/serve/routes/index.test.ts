// The registry's route table: which handler each path reaches, and what the
// pattern captures. Behaviour over HTTP is in ../registry.test.ts.

import { describe, expect, it } from 'vitest';
import {
  archiveFile,
  DISCOVERY_FILE,
  downloadFile,
  downloadsSummaryFile,
  latestDetailFile,
  listingFile,
  providersListingFile,
  versionDetailFile,
  versionsFile,
} from '../../../src/protocol/paths.js';
import { discovery } from '../../../src/serve/routes/discovery.js';
import { downloadsSummary } from '../../../src/serve/routes/downloads-summary.js';
import { findRoute } from '../../../src/serve/routes/index.js';
import { listAll, listNamespace, listProviders, search } from '../../../src/serve/routes/listings.js';
import { archive, belowModule, download, downloadLatest, latestDetail, versionDetail, versions } from '../../../src/serve/routes/modules.js';
import { staticFile } from '../../../src/serve/routes/static-files.js';

const route = (path: string) => findRoute(path === '' ? [] : path.split('/'));
const module = { namespace: 'acme', name: 'vpc', provider: 'aws' };

describe('findRoute', () => {
  it('reaches each registry resource, literal segments before captures', () => {
    const cases: [string, unknown][] = [
      ['.well-known/terraform.json', discovery],
      ['v1/modules', listAll],
      ['v1/modules/search', search],
      ['v1/modules/acme', listNamespace],
      ['v1/modules/acme/vpc', listProviders],
      ['v1/modules/acme/vpc/aws', latestDetail],
      ['v1/modules/acme/vpc/aws/versions', versions],
      ['v1/modules/acme/vpc/aws/download', downloadLatest],
      ['v1/modules/acme/vpc/aws/1.0.0', versionDetail],
      ['v1/modules/acme/vpc/aws/1.0.0/download', download],
      ['v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz', archive],
      ['v1/modules/acme/vpc/aws/1.0.0/a/b', belowModule],
      ['v2/modules/acme/vpc/aws/downloads/summary', downloadsSummary],
      ['', staticFile],
      ['browse/app.js', staticFile],
      ['v1/other', staticFile],
    ];
    for (const [path, handler] of cases) expect(route(path).handler, path).toBe(handler);
  });

  it('routes every path the protocol module lays out to its resource', () => {
    const cases: [string, unknown][] = [
      [DISCOVERY_FILE, discovery],
      [listingFile(), listAll],
      [listingFile('acme'), listNamespace],
      [providersListingFile('acme', 'vpc'), listProviders],
      [latestDetailFile(module), latestDetail],
      [versionsFile(module), versions],
      [versionDetailFile(module, '1.0.0'), versionDetail],
      [downloadFile(module, '1.0.0'), download],
      [archiveFile(module, '1.0.0'), archive],
      [downloadsSummaryFile(module), downloadsSummary],
    ];
    for (const [path, handler] of cases) expect(route(path).handler, path).toBe(handler);
  });

  it('captures the named segments', () => {
    expect(route('v1/modules/acme/vpc/aws/1.0.0/download').params).toEqual({ ...module, version: '1.0.0' });
    expect(route('v1/modules/acme/vpc/aws/1.0.0/vpc-aws-1.0.0.tar.gz').params).toEqual({ ...module, version: '1.0.0', file: 'vpc-aws-1.0.0.tar.gz' });
    expect(route('browse/app.js').params).toEqual({ path: 'browse/app.js' });
    expect(route('').params).toEqual({ path: '' });
  });

  it("takes a document's place in the tree (…/index.json) as its protocol path", () => {
    expect(route('v1/modules/index.json').handler).toBe(listAll);
    expect(route('v1/modules/acme/index.json').handler).toBe(listNamespace);
    expect(route('v1/modules/acme/vpc/aws/index.json').handler).toBe(latestDetail);
    expect(route('v1/modules/acme/vpc/aws/1.0.0/index.json').params).toEqual({ ...module, version: '1.0.0' });
  });

  it('never serves a file for a path under the API prefixes', () => {
    for (const path of ['v2/modules', 'v2/modules/acme/vpc/aws/downloads', 'v2/modules/manifest.json']) {
      const { handler, params } = route(path);
      expect(handler, path).not.toBe(staticFile);
      expect(() => handler({ params } as never), path).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    }
  });
});
