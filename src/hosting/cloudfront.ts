// `modmirror hosting cloudfront`: the CloudFront Functions viewer-response
// function that adds Terraform's download headers in front of a bucket that
// `modmirror push` filled (the objects carry their own content types and
// cache lifetimes). The location is built by the same rule as the `download`
// files (locationTemplate), from the request path, so one function serves
// every version.

import { DOWNLOAD_HEADERS } from '../protocol/headers.js';
import { basePathOf } from '../protocol/paths.js';
import { escapeRegExp, locationTemplate, type HostingOptions } from './rules.js';

/** Stand-ins for the path's parts, replaced by the function's match groups. */
const PARTS = { namespace: '\u00001\u0000', name: '\u00002\u0000', provider: '\u00003\u0000', version: '\u00004\u0000' };

export function cloudfrontFunction(options: HostingOptions): string {
  const prefix = basePathOf(options.baseUrl);
  // A JavaScript expression: the template's literal pieces quoted, the parts as m[1]..m[4].
  const location = locationTemplate(options.baseUrl, PARTS)
    .split('\u0000')
    .map((piece, i) => (i % 2 === 1 ? `m[${piece}]` : JSON.stringify(piece)))
    .filter((piece) => piece !== '""')
    .join(' + ');
  const path = `^${escapeRegExp(prefix)}v1/modules/([^/]+)/([^/]+)/([^/]+)/([^/]+)/download$`.replace(/\//g, '\\/');
  return [
    `// CloudFront Functions, viewer response (runtime cloudfront-js-2.0), for the modmirror mirror`,
    `// ${options.baseUrl === '' ? 'with relative download locations' : `at ${options.baseUrl}`} (written by \`modmirror hosting cloudfront\`).`,
    "// Terraform reads a version's download location only from X-Terraform-Get; the bucket",
    '// cannot store that header, so the edge adds it to each successful `download` answer.',
    "// Associate it with the distribution's default behavior as a viewer-response function.",
    'function handler(event) {',
    '  var response = event.response;',
    `  var m = event.request.uri.match(/${path}/);`,
    '  if (m && response.statusCode === 200) {',
    `    var location = ${location};`,
    ...DOWNLOAD_HEADERS.map((h) => `    response.headers['${h.toLowerCase()}'] = { value: location };`),
    '  }',
    '  return response;',
    '}',
    '',
  ].join('\n');
}
