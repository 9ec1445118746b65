// Which upstream versions `sync` copies: module specs `NS/NAME/PROVIDER[@CONSTRAINT]`
// whose constraint reads the way Terraform reads a module's `version`
// argument (hashicorp/go-version), so a mirror can be filled with exactly
// what a configuration will ask for. npm-style ranges (`^1.2`) work too.

// Single functions: config validation loads this module on every command.
import compare from 'semver/functions/compare.js';
import eq from 'semver/functions/eq.js';
import major from 'semver/functions/major.js';
import minor from 'semver/functions/minor.js';
import patch from 'semver/functions/patch.js';
import prerelease from 'semver/functions/prerelease.js';
import satisfies from 'semver/functions/satisfies.js';
import valid from 'semver/functions/valid.js';
import validRange from 'semver/ranges/valid.js';
import { MirrorError } from '../errors.js';
import { isValidName } from './paths.js';
import type { ModuleAddress } from '../types.js';

export interface ModuleSpec {
  address: ModuleAddress;
  /** As written; '' for every version. */
  constraint: string;
  matches: (version: string) => boolean;
}

export function parseModuleSpec(text: string): ModuleSpec {
  const at = text.indexOf('@');
  const path = at === -1 ? text : text.slice(0, at);
  const constraint = at === -1 ? '' : text.slice(at + 1).trim();
  const parts = path.split('/');
  if (parts.length !== 3 || !parts.every(isValidName)) {
    throw new MirrorError('USAGE', `Invalid module "${text}": expected NAMESPACE/NAME/PROVIDER, optionally @CONSTRAINT (e.g. acme/vpc/aws@"~> 2.0").`);
  }
  if (at !== -1 && constraint === '') throw new MirrorError('USAGE', `Invalid module "${text}": nothing follows "@"; leave it out to copy every version.`);
  const [namespace = '', name = '', provider = ''] = parts;
  return { address: { namespace, name, provider }, constraint, matches: constraint === '' ? () => true : parseConstraint(constraint) };
}

interface Clause {
  op: string;
  /** The constraint's version, its missing parts as 0. */
  version: string;
  /** How many of major.minor.patch were written: `~>` keeps all but the last fixed. */
  written: number;
  parts: number[];
}

const CLAUSE = /^(=|!=|>=|<=|>|<|~>)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * `>= 1.2, < 2.0`, `~> 1.4`, `= 1.2.3`, `!= 1.3.0`: every clause must hold.
 * As in Terraform, a pre-release matches only a clause naming it exactly.
 */
export function parseConstraint(text: string): (version: string) => boolean {
  const clauses = text.split(',').map((c) => CLAUSE.exec(c.trim()));
  if (clauses.every((m) => m !== null)) {
    const parsed: Clause[] = clauses.map((m) => {
      const parts = [Number(m[2]), Number(m[3] ?? 0), Number(m[4] ?? 0)];
      return { op: m[1] ?? '=', version: `${parts.join('.')}${m[5] ?? ''}`, written: [m[2], m[3], m[4]].filter((p) => p !== undefined).length, parts };
    });
    return (version) => {
      if (valid(version) === null) return false;
      if (prerelease(version) !== null && !parsed.some((c) => c.op === '=' && eq(c.version, version))) return false;
      return parsed.every((c) => holds(c, version));
    };
  }
  const range = validRange(text);
  if (range === null) {
    throw new MirrorError('USAGE', `Invalid version constraint "${text}".`, {
      hint: 'Write it as in a Terraform module block: ">= 1.2, < 2.0", "~> 1.4" or "= 1.2.3" (npm ranges such as ^1.2 work too).',
    });
  }
  return (version) => valid(version) !== null && satisfies(version, range);
}

function holds(c: Clause, version: string): boolean {
  const cmp = compare(version, c.version);
  switch (c.op) {
    case '=':
      return cmp === 0;
    case '!=':
      return cmp !== 0;
    case '>':
      return cmp > 0;
    case '>=':
      return cmp >= 0;
    case '<':
      return cmp < 0;
    case '<=':
      return cmp <= 0;
    default: {
      // `~>`: at least the version, with every written part but the last unchanged.
      if (cmp < 0) return false;
      const v = [major(version), minor(version), patch(version)];
      return c.parts.slice(0, Math.max(0, c.written - 1)).every((p, i) => v[i] === p);
    }
  }
}
