// What serve's listeners do below the router: answer requests the HTTP
// parser refused, in the format of the API they were for, and make an HTTPS
// server with errors that name the file at fault.

import { readFileSync } from 'node:fs';
import { type createServer as createHttpServer, maxHeaderSize, STATUS_CODES } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { MirrorError } from '../errors.js';
import { errorAnswer } from '../http/errors.js';
import { isManagementTarget } from './target.js';

export type ClientError = NodeJS.ErrnoException & { rawPacket?: Buffer };

/**
 * The raw response to a request the HTTP parser refused, in the error format of
 * the API it was for when the bytes the parser failed on start with the request
 * line (they hold only the last chunk read: a request line sent in an earlier
 * chunk gets the registry's format).
 */
export function clientErrorResponse(error: ClientError): Buffer {
  const overflow = error.code === 'HPE_HEADER_OVERFLOW';
  const target = /^[A-Z]+ (\S+)/.exec(error.rawPacket?.toString('latin1', 0, 1024) ?? '')?.[1];
  const format = target !== undefined && isManagementTarget(target) ? 'jsonapi' : 'registry';
  const [code, reason, detail] = overflow
    ? (['HEADERS_TOO_LARGE', 'Request Header Fields Too Large', `The request line and headers are larger than ${maxHeaderSize} bytes.`] as const)
    : (['BAD_REQUEST', 'Bad Request', 'The request is not valid HTTP/1.1.'] as const);
  // The registry's body has always given just the reason phrase here; JSON:API's has the detail.
  const { status, headers, body } = errorAnswer(new MirrorError(code, format === 'jsonapi' ? detail : reason), format);
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), 'Connection: close'];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]);
}

function readTls(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new MirrorError('SERVE_FAILED', `Cannot read the TLS ${what} "${file}": ${(error as Error).message}`, {
      hint: 'Check the path given to --tls-cert / --tls-key.',
      cause: error,
    });
  }
}

/** An HTTPS server, or an error that says which file is wrong rather than OpenSSL's routine names. */
export function httpsServer(tls: { cert: string; key: string }, onRequest: Parameters<typeof createHttpServer>[1]): ReturnType<typeof createHttpsServer> {
  const cert = readTls(tls.cert, 'certificate');
  const key = readTls(tls.key, 'key');
  try {
    return createHttpsServer({ cert, key }, onRequest);
  } catch (error) {
    const swapped = /PRIVATE KEY-----/.test(cert.toString('latin1')) && /CERTIFICATE-----/.test(key.toString('latin1'));
    const problem = swapped
      ? `"${tls.cert}" holds a private key and "${tls.key}" a certificate: the two are swapped`
      : `the certificate "${tls.cert}" and key "${tls.key}" cannot be used together (${(error as Error).message})`;
    throw new MirrorError('SERVE_FAILED', `Cannot serve HTTPS: ${problem}.`, {
      hint: "--tls-cert takes the PEM certificate (BEGIN CERTIFICATE), --tls-key its PEM private key (BEGIN ... PRIVATE KEY), and the key must be the certificate's.",
      cause: error,
    });
  }
}
