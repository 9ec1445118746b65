import { expect, it } from 'vitest';
import { CORS_HEADERS, DOWNLOAD_HEADERS, downloadHeaders } from '../../src/protocol/headers.js';

it('sends the download location in the header Terraform reads and the one the spec names, same value', () => {
  expect(downloadHeaders('./vpc-aws-1.0.0.tar.gz')).toEqual({ 'X-Terraform-Get': './vpc-aws-1.0.0.tar.gz', 'X-Service-Get': './vpc-aws-1.0.0.tar.gz' });
  expect(Object.keys(downloadHeaders('x'))).toEqual(DOWNLOAD_HEADERS);
});

it('lets a browse page on another origin read the download headers', () => {
  expect(CORS_HEADERS['Access-Control-Expose-Headers']!.split(', ')).toEqual(DOWNLOAD_HEADERS);
});
