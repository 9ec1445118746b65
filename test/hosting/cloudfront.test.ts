// The CloudFront function `modmirror hosting cloudfront` prints, run as
// CloudFront would run it: the download header it adds is the location the
// `download` file holds, for relative and absolute base URLs, and nothing
// else is touched.

import { describe, expect, it } from 'vitest';
import { cloudfrontFunction } from '../../src/hosting/cloudfront.js';
import { downloadDocument } from '../../src/protocol/documents.js';
import { basePathOf, downloadFile } from '../../src/protocol/paths.js';

type Handler = (event: unknown) => { statusCode: number; headers: Record<string, { value: string }> };

function handlerFor(baseUrl: string): Handler {
  const text = cloudfrontFunction({ dir: '/srv/mirror', listen: { port: 80 }, baseUrl });
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the generated CloudFront Function's code, which is what is tested
  return new Function(`${text}\nreturn handler;`)() as Handler;
}

describe('hosting cloudfront', () => {
  const address = { namespace: 'acme', name: 'net-work', provider: 'aws' };
  for (const baseUrl of ['', 'https://cdn.example.com/', 'https://cdn.example.com/registry/']) {
    it(`adds the download file's location as both download headers (${baseUrl || 'relative'})`, () => {
      const handler = handlerFor(baseUrl);
      const uri = `${basePathOf(baseUrl)}${downloadFile(address, '1.2.3-rc.1')}`;
      const out = handler({ request: { uri }, response: { statusCode: 200, headers: {} } });
      const { location } = downloadDocument(address, '1.2.3-rc.1', baseUrl);
      expect(out.headers).toEqual({ 'x-terraform-get': { value: location }, 'x-service-get': { value: location } });
    });
  }

  it('leaves other paths and failed answers alone', () => {
    const handler = handlerFor('');
    expect(handler({ request: { uri: '/v1/modules/acme/x/aws/versions' }, response: { statusCode: 200, headers: {} } }).headers).toEqual({});
    expect(handler({ request: { uri: '/v1/modules/acme/x/aws/1.0.0/download' }, response: { statusCode: 404, headers: {} } }).headers).toEqual({});
  });
});
