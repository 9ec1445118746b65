// The pure JSON:API rules of the management shim (src/management/jsonapi.ts):
// pagination and its links (spec 2.5, 8), `include` names (spec 2.1),
// single-resource bodies (the error object is tested in test/http/errors.test.ts).

import { describe, expect, it } from 'vitest';
import { MirrorError } from '../../src/errors.js';
import { errorAnswer } from '../../src/http/errors.js';
import { includesOf, pageLinksAndMeta, paginate, resourceBody } from '../../src/management/jsonapi.js';

const ITEMS = Array.from({ length: 45 }, (_, i) => `item-${i + 1}`);
const query = (text = '') => new URLSearchParams(text);

/** The error a call throws, as the client sees it (src/http/errors.ts maps it). */
function apiErrorOf(call: () => unknown): { status: number; title: string; message: string; pointer: string | undefined } {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(MirrorError);
    const e = error as MirrorError;
    const answer = errorAnswer(e, 'jsonapi');
    return { status: answer.status, title: JSON.parse(answer.body.toString()).errors[0].title, message: e.message, pointer: e.pointer };
  }
  throw new Error('expected a MirrorError');
}

describe('paginate', () => {
  it('gives the first 20 items when no page is asked for', () => {
    const page = paginate(ITEMS, query());
    expect(page).toEqual({ items: ITEMS.slice(0, 20), number: 1, size: 20, total: 45 });
  });

  it("takes page[number] and page[size], and the caller's default size", () => {
    expect(paginate(ITEMS, query('page[number]=3&page[size]=20')).items).toEqual(['item-41', 'item-42', 'item-43', 'item-44', 'item-45']);
    expect(paginate(ITEMS, query('page[number]=2&page[size]=7')).items).toEqual(ITEMS.slice(7, 14));
    expect(paginate(ITEMS, query(), 5)).toEqual({ items: ITEMS.slice(0, 5), number: 1, size: 5, total: 45 });
  });

  it('caps the size at 100, treats an empty value as absent, and answers a page past the end with no items', () => {
    const many = Array.from({ length: 250 }, (_, i) => i);
    expect(paginate(many, query('page[size]=500'))).toMatchObject({ size: 100, items: many.slice(0, 100) });
    expect(paginate(ITEMS, query('page[number]=&page[size]='))).toMatchObject({ number: 1, size: 20 });
    expect(paginate(ITEMS, query('page[number]=9'))).toEqual({ items: [], number: 9, size: 20, total: 45 });
  });

  it('refuses anything but a positive integer with a 400 naming the parameter and the value', () => {
    for (const [text, name, raw] of [
      ['page[number]=0', 'page[number]', '0'],
      ['page[size]=-1', 'page[size]', '-1'],
      ['page[number]=x', 'page[number]', 'x'],
      ['page[size]=1.5', 'page[size]', '1.5'],
      ['page[number]=1e2', 'page[number]', '1e2'],
      // Past 2^53 a number prints as 1e+24, and links made from it would be refused in turn.
      ['page[number]=999999999999999999999999', 'page[number]', '999999999999999999999999'],
      ['page[size]=9007199254740993', 'page[size]', '9007199254740993'],
    ] as const) {
      expect(
        apiErrorOf(() => paginate(ITEMS, query(text))),
        text,
      ).toEqual({
        status: 400,
        title: 'bad request',
        message: `${name} must be a positive integer, got "${raw}".`,
        pointer: undefined,
      });
    }
  });
});

describe('pageLinksAndMeta', () => {
  it('links the first, previous, next and last pages, keeping the other query parameters', () => {
    const q = query('q=net&page[number]=2&page[size]=20');
    const { links, meta } = pageLinksAndMeta(paginate(ITEMS, q), '/api/v2/organizations', q);
    const link = (n: number) => `/api/v2/organizations?q=net&page%5Bnumber%5D=${n}&page%5Bsize%5D=20`;
    expect(links).toEqual({ self: link(2), first: link(1), prev: link(1), next: link(3), last: link(3) });
    expect(meta).toEqual({ pagination: { 'current-page': 2, 'page-size': 20, 'prev-page': 1, 'next-page': 3, 'total-pages': 3, 'total-count': 45 } });
  });

  it('has no previous on the first page and no next on the last', () => {
    const first = pageLinksAndMeta(paginate(ITEMS, query()), '/x', query());
    expect([first.links.prev, first.meta.pagination['prev-page'], first.meta.pagination['next-page']]).toEqual([null, null, 2]);
    const last = pageLinksAndMeta(paginate(ITEMS, query('page[number]=3')), '/x', query('page[number]=3'));
    expect([last.links.next, last.meta.pagination['next-page'], last.meta.pagination['prev-page']]).toEqual([null, null, 2]);
  });

  it('counts one page, not zero, for an empty list', () => {
    const { links, meta } = pageLinksAndMeta(paginate([], query()), '/x', query());
    expect(meta.pagination).toEqual({ 'current-page': 1, 'page-size': 20, 'prev-page': null, 'next-page': null, 'total-pages': 1, 'total-count': 0 });
    expect(links.last).toBe('/x?page%5Bnumber%5D=1&page%5Bsize%5D=20');
  });
});

describe('includesOf', () => {
  const ALLOWED = ['task-results', 'policy-evaluations', 'run'] as const;

  it('gives each name once, in its canonical spelling and the order asked, from one or several parameters', () => {
    expect(includesOf(query('include=run,task_results&include=task-results, policy_evaluations'), ALLOWED)).toEqual([
      'run',
      'task-results',
      'policy-evaluations',
    ]);
    expect(includesOf(query(), ALLOWED)).toEqual([]);
    expect(includesOf(query('include=,'), ALLOWED)).toEqual([]);
  });

  it('refuses an unknown name with the "include parameter" detail go-tfe recognises, listing both spellings', () => {
    expect(apiErrorOf(() => includesOf(query('include=run,workspace'), ALLOWED))).toEqual({
      status: 400,
      title: 'bad request',
      message: 'Invalid include parameter "workspace": use one of task-results (or task_results), policy-evaluations (or policy_evaluations), run.',
      pointer: undefined,
    });
  });
});

describe('resourceBody', () => {
  it('gives the attributes of a data object of the right type, or none', () => {
    expect(resourceBody({ data: { type: 'users', attributes: { email: 'a@b' } } }, 'users')).toEqual({ email: 'a@b' });
    expect(resourceBody({ data: { type: 'users' } }, 'users')).toEqual({});
    expect(resourceBody({ data: { attributes: { x: 1 } } }, 'users', { allowEmptyType: true })).toEqual({ x: 1 });
    expect(resourceBody({ data: { type: '', attributes: { x: 1 } } }, 'users', { allowEmptyType: true })).toEqual({ x: 1 });
  });

  it('refuses a wrong shape with a 422 pointing at the member', () => {
    const cases: [unknown, string, string][] = [
      [null, '/data', 'The body must have a "data" object.'],
      [{ data: [] }, '/data', 'The body must have a "data" object.'],
      [{ data: { type: 'teams' } }, '/data/type', 'data.type must be "users", got "teams".'],
      [{ data: {} }, '/data/type', 'data.type must be "users", got undefined.'],
      [{ data: { type: 'users', attributes: [1] } }, '/data/attributes', 'data.attributes must be an object.'],
    ];
    for (const [body, pointer, message] of cases) {
      expect(
        apiErrorOf(() => resourceBody(body, 'users')),
        JSON.stringify(body),
      ).toEqual({ status: 422, title: 'invalid attribute', message, pointer });
    }
  });
});
