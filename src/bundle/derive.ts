// A derived file of a `bundle --since`: a version's detail document that the
// receiver already has but whose module-wide keys changed (a new version adds
// itself to every detail's `versions`). Rebuilt from the receiver's own copy
// and serialized as emit writes documents, so its sha256 can be checked
// against the sender's file; both sides call this one function.

import { jsonText } from '../mirror/staging.js';
import type { DerivedFile } from './format.js';

/**
 * The document's text, or why it cannot be made: each of `entry.keys` in
 * order, valued from the entry, else the module's shared values, else `own`.
 */
export function derivedText(own: string, entry: Pick<DerivedFile, 'keys' | 'values'>, shared: Record<string, unknown> = {}): string | { problem: string } {
  let ownDocument: unknown;
  try {
    ownDocument = JSON.parse(own);
  } catch {
    return { problem: 'is not JSON' };
  }
  if (typeof ownDocument !== 'object' || ownDocument === null || Array.isArray(ownDocument)) return { problem: 'is not a JSON object' };
  const from = ownDocument as Record<string, unknown>;
  // No prototype: a key named __proto__ is then a plain key, as in the JSON.
  const document = Object.create(null) as Record<string, unknown>;
  for (const key of entry.keys) {
    if (Object.hasOwn(entry.values, key)) document[key] = entry.values[key];
    else if (Object.hasOwn(shared, key)) document[key] = shared[key];
    else if (Object.hasOwn(from, key)) document[key] = from[key];
    else return { problem: `has no "${key}"` };
  }
  return jsonText(document);
}
