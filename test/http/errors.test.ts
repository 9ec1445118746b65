// The one mapping from errors to HTTP answers (spec 7): statuses, both body
// formats, and the headers an error adds.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MirrorError, type ErrorCode } from '../../src/errors.js';
import { errorAnswer, statusOf } from '../../src/http/errors.js';
import { withLock } from '../../src/mirror/lock.js';
import { tempDir } from '../helpers.js';

const json = (body: Buffer) => JSON.parse(body.toString('utf8'));

describe('statusOf', () => {
  it('gives each code a request can meet its status', () => {
    const expected: [ErrorCode, number][] = [
      ['BAD_REQUEST', 400],
      ['UNAUTHORIZED', 401],
      ['FORBIDDEN', 403],
      ['NOT_FOUND', 404],
      ['METHOD_NOT_ALLOWED', 405],
      ['CONFLICT', 409],
      ['PAYLOAD_TOO_LARGE', 413],
      ['URI_TOO_LONG', 414],
      ['UNSUPPORTED_MEDIA_TYPE', 415],
      ['INVALID_ATTRIBUTE', 422],
      ['HEADERS_TOO_LARGE', 431],
      ['LOCK_BUSY', 503],
    ];
    for (const [code, status] of expected) expect(statusOf(new MirrorError(code, 'x')), code).toBe(status);
  });

  it('makes a fault of the server or its data a 500, not something to retry', () => {
    for (const code of ['DATA_INVALID', 'CONFIG_INVALID', 'OUTPUT_FAILED', 'USAGE'] as const) expect(statusOf(new MirrorError(code, 'x')), code).toBe(500);
    expect(statusOf(new Error('bug'))).toBe(500);
    expect(statusOf('thrown string')).toBe(500);
  });
});

describe('errorAnswer', () => {
  it('renders the registry format outside /api/v2 (spec 7.2)', () => {
    const answer = errorAnswer(new MirrorError('NOT_FOUND', 'Module a/b/c not found'), 'registry');
    expect(answer.status).toBe(404);
    expect(answer.headers).toEqual({ 'Content-Type': 'application/json', 'Content-Length': answer.body.length });
    expect(answer.body.toString('utf8')).toBe('{"errors":["Module a/b/c not found"]}\n');
  });

  it('renders JSON:API error objects under /api/v2 (spec 7.1), with the field at fault', () => {
    const answer = errorAnswer(new MirrorError('INVALID_ATTRIBUTE', 'data.type must be "organizations"', { pointer: '/data/type' }), 'jsonapi');
    expect(answer.status).toBe(422);
    expect(answer.headers['Content-Type']).toBe('application/vnd.api+json');
    expect(json(answer.body)).toEqual({
      errors: [{ status: '422', title: 'invalid attribute', detail: 'data.type must be "organizations"', source: { pointer: '/data/type' } }],
    });
    expect(json(errorAnswer(new MirrorError('UNAUTHORIZED', 'token'), 'jsonapi').body).errors[0]).toEqual({
      status: '401',
      title: 'unauthorized',
      detail: 'token',
    });
  });

  it('lists the allowed methods on a 405', () => {
    const answer = errorAnswer(new MirrorError('METHOD_NOT_ALLOWED', 'Method POST not allowed', { allow: ['GET', 'HEAD'] }), 'registry');
    expect(answer.headers['Allow']).toBe('GET, HEAD');
  });

  it('asks to retry only when a lock is busy', () => {
    const busy = errorAnswer(new MirrorError('LOCK_BUSY', 'Another modmirror is writing data/store; gave up waiting.'), 'jsonapi');
    expect(busy.status).toBe(503);
    expect(busy.headers['Retry-After']).toBe('1');
    expect(json(busy.body).errors[0].title).toBe('service unavailable');
    const torn = errorAnswer(new MirrorError('DATA_INVALID', 'The data file "data/users.json" is not valid JSON'), 'jsonapi');
    expect(torn.status).toBe(500);
    expect(torn.headers['Retry-After']).toBeUndefined();
    // Any caller can cause a 500: its body names the code, never a server path.
    expect(json(torn.body).errors[0]).toEqual({
      status: '500',
      title: 'internal server error',
      detail: "Internal error (DATA_INVALID): the server's log says what failed.",
    });
  });

  it('answers a lock another writer holds past the wait with 503 and Retry-After', async () => {
    const target = join(tempDir(), 'store');
    let busy: unknown;
    await withLock(target, async () => {
      busy = await withLock(target, async () => 'acquired', { waitMs: 50 }).catch((error: unknown) => error);
    });
    expect(busy).toMatchObject({ code: 'LOCK_BUSY' });
    const answer = errorAnswer(busy, 'jsonapi');
    expect([answer.status, answer.headers['Retry-After']]).toEqual([503, '1']);
  });

  it("keeps a bug's message, which speaks of modmirror's insides, from the client", () => {
    expect(errorAnswer(new TypeError("Cannot read properties of undefined (reading 'x')"), 'registry').body.toString('utf8')).toBe(
      '{"errors":["Internal error"]}\n',
    );
    expect(json(errorAnswer(new Error('secret'), 'jsonapi').body).errors[0]).toEqual({
      status: '500',
      title: 'internal server error',
      detail: 'Internal error',
    });
  });
});
