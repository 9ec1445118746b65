import { describe, expect, it } from 'vitest';
import { detailDocument, discoveryDocument, downloadDocument, downloadsSummaryDocument, pageMeta } from '../../src/protocol/documents.js';
import type { BuiltVersion, Input, ModuleContent } from '../../src/types.js';

describe('pageMeta (spec 8)', () => {
  const url = (next: number) => `/v1/modules?offset=${next}&limit=10`;
  it('has next_offset and next_url only when more results exist', () => {
    expect(pageMeta(25, 0, 10, url)).toEqual({ limit: 10, current_offset: 0, next_offset: 10, next_url: '/v1/modules?offset=10&limit=10' });
    expect(pageMeta(20, 10, 10, url)).toEqual({ limit: 10, current_offset: 10, prev_offset: 0 });
    expect(pageMeta(0, 0, 10, url)).toEqual({ limit: 10, current_offset: 0 });
  });
  it('has prev_offset only when offset > 0, never below 0', () => {
    expect(pageMeta(100, 3, 10, url).prev_offset).toBe(0);
    expect(pageMeta(100, 30, 10, url).prev_offset).toBe(20);
  });
});

const address = { namespace: 'acme', name: 'vpc', provider: 'aws' };

function input(name: string, fields: Partial<Input>): Input {
  return { name, type: '', description: '', default: undefined, required: false, sensitive: false, nullable: true, ...fields };
}

function version(inputs: Input[]): BuiltVersion {
  const root: ModuleContent = {
    path: '',
    readme: '',
    empty: false,
    inputs,
    outputs: [],
    resources: [],
    dataSources: [],
    moduleCalls: [],
    providers: [],
    requiredVersion: '',
  };
  return {
    source: { address, meta: { owner: '', description: '', source: '', verified: false }, version: '1.0.0', tag: 'v1.0.0', publishedAt: new Date(0) },
    content: { root, submodules: [], examples: [] },
    archive: { sha256: '', size: 0 },
    description: '',
  };
}

describe('detailDocument inputs (spec 2.7)', () => {
  it('shows each default JSON-encoded as a string, as the public registry does, and "" when required', () => {
    const doc = detailDocument(
      version([
        input('required', { required: true }),
        input('text', { default: 'eu-west-1' }),
        input('number', { default: 3 }),
        input('flag', { default: false }),
        input('list', { default: ['a', 'b'] }),
        input('object', { default: { size: 1, tags: {} } }),
        input('null', { default: null }),
      ]),
      ['1.0.0'],
      ['aws'],
    );
    expect(Object.fromEntries(doc.root.inputs.map((i) => [i.name, i.default]))).toEqual({
      required: '',
      text: '"eu-west-1"',
      number: '3',
      flag: 'false',
      list: '["a","b"]',
      object: '{"size":1,"tags":{}}',
      null: 'null',
    });
  });
});

describe('small documents', () => {
  it('discovery points modules.v1 at the base URL, or at a path', () => {
    expect(discoveryDocument('')).toEqual({ 'modules.v1': '/v1/modules/' });
    expect(discoveryDocument('https://r.example/m/')).toEqual({ 'modules.v1': 'https://r.example/m/v1/modules/' });
  });
  it('download carries the location the headers carry', () => {
    expect(downloadDocument(address, '1.0.0', '')).toEqual({ location: './vpc-aws-1.0.0.tar.gz' });
  });
  it('downloads summary has zero counts until a server counts', () => {
    expect(downloadsSummaryDocument(address)).toEqual({
      data: { type: 'module-downloads-summary', id: 'acme/vpc/aws', attributes: { week: 0, month: 0, year: 0, total: 0 } },
    });
  });
});
