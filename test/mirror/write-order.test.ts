// The order in which a change reaches readers (src/mirror/write-order.ts), the
// same for a folder and a bucket.

import { describe, expect, it } from 'vitest';
import { inWriteOrder, phaseOf } from '../../src/mirror/write-order.js';

describe('write order', () => {
  it('puts archives first, then documents, then what lists versions, the manifest last', () => {
    expect(phaseOf('v1/modules/a/b/c/1.0.0/b-c-1.0.0.tar.gz')).toBe('archives');
    expect(phaseOf('providers/h/n/t/terraform-provider-t_1.0.0_linux_amd64.zip')).toBe('archives');
    expect(phaseOf('v1/modules/a/b/c/1.0.0/download')).toBe('documents');
    expect(phaseOf('v1/modules/a/b/c/1.0.0/index.json')).toBe('documents');
    for (const rel of [
      'v1/modules/a/b/c/versions',
      'v1/modules/a/b/c/index.json',
      'v1/modules/index.json',
      'search-index.json',
      '.well-known/terraform.json',
      'providers/h/n/t/index.json',
    ]) {
      expect(phaseOf(rel), rel).toBe('indexes');
    }
    expect(phaseOf('manifest.json')).toBe('manifest');
  });

  it('orders a change by phase, keeping the order within each', () => {
    const rels = [
      'manifest.json',
      'v1/modules/a/b/c/versions',
      'v1/modules/a/b/c/1.1.0/download',
      'v1/modules/a/b/c/1.1.0/b-c-1.1.0.tar.gz',
      'search-index.json',
      'v1/modules/a/b/c/1.1.0/index.json',
    ];
    expect(inWriteOrder(rels)).toEqual([
      'v1/modules/a/b/c/1.1.0/b-c-1.1.0.tar.gz',
      'v1/modules/a/b/c/1.1.0/download',
      'v1/modules/a/b/c/1.1.0/index.json',
      'v1/modules/a/b/c/versions',
      'search-index.json',
      'manifest.json',
    ]);
  });
});
