// Synthetic corpus for the benchmarks: git repositories named
// terraform-aws-m<N> whose tags are versions, with HCL shaped like real public
// modules (dozens of variables with complex types, dynamic blocks, for
// expressions, submodules, examples, a terraform-docs style README) and
// histories shaped like real ones: from one tag to the next only 1-3 files
// change, so most file contents repeat across tags.
//
// Everything is derived from `seed` with a small PRNG, and commits carry fixed,
// increasing dates and a fixed identity, so the same arguments give the same
// commit ids on every run and every machine.

import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

// ---- PRNG ------------------------------------------------------------------

/** mulberry32 with a few helpers. */
export function createRng(seed) {
  let a = (seed >>> 0) ^ 0x9e3779b9;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (list) => list[Math.floor(next() * list.length)],
    weighted: (pairs) => {
      const total = pairs.reduce((n, [w]) => n + w, 0);
      let x = next() * total;
      for (const [w, v] of pairs) if ((x -= w) < 0) return v;
      return pairs[pairs.length - 1][1];
    },
    sample: (list, n) => {
      const copy = [...list];
      const out = [];
      while (out.length < n && copy.length > 0) out.push(copy.splice(Math.floor(next() * copy.length), 1)[0]);
      return out;
    },
  };
  return r;
}

// ---- HCL values and types --------------------------------------------------

/** A literal written as-is (numbers like 1e3, `null`). Plain object so structuredClone keeps it. */
const lit = (text) => ({ $lit: text });
const isLit = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && '$lit' in v;
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function hclString(s) {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\$\{/g, '$${').replace(/%\{/g, '%%{')}"`;
}

function renderValue(v, indent = '') {
  if (v === null) return 'null';
  if (isLit(v)) return v.$lit;
  if (typeof v === 'string') return hclString(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    if (v.every((x) => x === null || typeof x !== 'object' || isLit(x))) return `[${v.map((x) => renderValue(x)).join(', ')}]`;
    return `[\n${v.map((x) => `${inner}${renderValue(x, inner)},`).join('\n')}\n${indent}]`;
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return '{}';
  const shown = keys.map((k) => (IDENT.test(k) ? k : hclString(k)));
  const width = Math.max(...shown.map((k) => k.length));
  return `{\n${keys.map((k, i) => `${inner}${shown[i].padEnd(width)} = ${renderValue(v[k], inner)}`).join('\n')}\n${indent}}`;
}

/** Types: {t: 'string'|'number'|'bool'|'any'} | {t: 'list'|'set'|'map', of} | {t: 'object', fields: [{name, type, optional, def}]} */
function renderType(type, indent = '') {
  switch (type.t) {
    case 'list':
    case 'set':
    case 'map':
      return `${type.t}(${renderType(type.of, indent)})`;
    case 'object': {
      const inner = `${indent}  `;
      const width = Math.max(...type.fields.map((f) => f.name.length));
      const lines = type.fields.map((f) => {
        const t = renderType(f.type, inner);
        const shown = !f.optional ? t : f.def === undefined ? `optional(${t})` : `optional(${t}, ${renderValue(f.def, inner)})`;
        return `${inner}${f.name.padEnd(width)} = ${shown}`;
      });
      return `object({\n${lines.join('\n')}\n${indent}})`;
    }
    default:
      return type.t;
  }
}

/** One-line form for README tables. */
function inlineType(type) {
  switch (type.t) {
    case 'list':
    case 'set':
    case 'map':
      return `${type.t}(${inlineType(type.of)})`;
    case 'object':
      return `object({ ${type.fields.map((f) => `${f.name} = ${f.optional ? `optional(${inlineType(f.type)})` : inlineType(f.type)}`).join(', ')} })`;
    default:
      return type.t;
  }
}

const inlineValue = (v) => renderValue(v).replace(/\n\s*/g, ' ');

// ---- vocabulary ------------------------------------------------------------

const NOUNS = [
  'vpc', 'subnet', 'nat_gateway', 'flow_log', 'route_table', 'instance', 'volume', 'bucket', 'queue', 'topic', 'log',
  'alarm', 'cluster', 'node_group', 'endpoint', 'dns', 'kms', 'iam_role', 'policy', 'secret', 'backup', 'cache',
  'listener', 'target_group', 'db', 'snapshot', 'replica', 'gateway', 'peering', 'acl', 'firewall', 'trail',
];
const SUFFIX = {
  string: ['name', 'description', 'arn', 'id', 'mode', 'class', 'prefix', 'identifier', 'engine_version', 'schedule'],
  bool: ['enabled', 'create', 'encrypted', 'multi_az', 'public', 'force_destroy', 'deletion_protection', 'monitoring'],
  number: ['count', 'size', 'timeout', 'retention_in_days', 'port', 'max_size', 'threshold', 'interval', 'capacity'],
  list: ['ids', 'cidr_blocks', 'arns', 'names', 'subnet_ids', 'zones', 'security_group_ids'],
  map: ['tags', 'labels', 'parameters', 'annotations'],
  set: ['principals', 'actions', 'allowed_accounts'],
  object: ['config', 'settings', 'options', 'spec'],
  mapobj: ['rules', 'definitions', 'configs', 'entries'],
  listobj: ['statements', 'policies', 'listeners', 'lifecycle_rules'],
  any: ['overrides', 'extra_settings', 'advanced'],
};
const WORDS = [
  'traffic', 'encryption', 'logging', 'replication', 'the primary', 'each', 'additional', 'custom', 'managed', 'default',
  'regional', 'cross-account', 'private', 'public', 'retention', 'lifecycle', 'network', 'monitoring', 'capacity', 'access',
];
const FIELD_POOL = [
  ['name', () => ({ t: 'string' })],
  ['enabled', () => ({ t: 'bool' })],
  ['size', () => ({ t: 'number' })],
  ['port', () => ({ t: 'number' })],
  ['protocol', () => ({ t: 'string' })],
  ['cidr_blocks', () => ({ t: 'list', of: { t: 'string' } })],
  ['tags', () => ({ t: 'map', of: { t: 'string' } })],
  ['retention_in_days', () => ({ t: 'number' })],
  ['kms_key_id', () => ({ t: 'string' })],
  ['description', () => ({ t: 'string' })],
  ['priority', () => ({ t: 'number' })],
  ['availability_zone', () => ({ t: 'string' })],
  ['ipv6', () => ({ t: 'bool' })],
  ['actions', () => ({ t: 'set', of: { t: 'string' } })],
  ['weight', () => ({ t: 'number' })],
];
const NUMBER_LITERALS = ['1e3', '3600', '30', '0.5', '2.5e-1', '86400', '5', '1024', '65535', '1e6', '7', '14', '300', '1.5'];
const STRINGS = ['primary', 'standard', 'gp3', 'INTELLIGENT_TIERING', 'us-east-1a', '10.0.0.0/16', 'tcp', 'HTTPS', 'auto', 'on-demand', 'arn:aws:iam::aws:policy/ReadOnlyAccess'];

function sentence(r) {
  return `${r.pick(['Controls', 'Determines', 'Specifies', 'Sets', 'Configures', 'Defines'])} ${r.pick(WORDS)} ${r.pick(WORDS)} for ${r.pick(WORDS)} ${r.pick(NOUNS).replace(/_/g, ' ')} resources`;
}

function description(r, name) {
  if (r.chance(0.15)) {
    return {
      heredoc: true,
      text: `${sentence(r)}.\n${sentence(r)}; see the AWS documentation.\nSet to null to use the provider default for ${name}.`,
    };
  }
  const quoted = r.chance(0.1) ? ` Use "auto" to let AWS choose.` : '';
  return { heredoc: false, text: `${sentence(r)}.${quoted}` };
}

// ---- values matching a type ------------------------------------------------

function valueOf(type, r, depth = 0) {
  switch (type.t) {
    case 'string': return r.pick(STRINGS);
    case 'number': return lit(r.pick(NUMBER_LITERALS));
    case 'bool': return r.chance(0.5);
    case 'list':
    case 'set':
      return Array.from({ length: r.int(depth > 0 ? 0 : 1, 3) }, () => valueOf(type.of, r, depth + 1));
    case 'map': {
      const out = {};
      for (let i = r.int(1, 3); i > 0; i--) out[r.pick(['primary', 'secondary', 'default', 'Environment', 'Team', 'a', 'b', 'logs'])] = valueOf(type.of, r, depth + 1);
      return out;
    }
    case 'object': {
      const out = {};
      for (const f of type.fields) if (!f.optional || r.chance(0.4)) out[f.name] = valueOf(f.type, r, depth + 1);
      return out;
    }
    default: {
      // `any`: nested maps and lists
      return { defaults: { retries: lit('3'), backoff: [lit('1'), lit('2'), lit('4')], timeout: lit(r.pick(NUMBER_LITERALS)) }, overrides: depth > 0 ? {} : { [r.pick(NOUNS)]: { enabled: r.chance(0.5) } } };
    }
  }
}

function objectType(r, depth = 0) {
  const fields = r.sample(FIELD_POOL, r.int(3, 6)).map(([name, make], i) => {
    const type = make();
    const optional = i > 0 && r.chance(0.7);
    const def = optional && r.chance(0.6) ? (type.t === 'list' || type.t === 'set' ? [] : type.t === 'map' ? {} : valueOf(type, r, 1)) : undefined;
    return { name, type, optional, def };
  });
  if (depth === 0 && r.chance(0.3)) {
    fields.push({ name: 'settings', type: objectType(r, 1), optional: true, def: {} });
  }
  return { t: 'object', fields };
}

const VAR_KINDS = [
  [5, 'string'], [5, 'bool'], [4, 'number'], [2, 'list'], [2, 'map'], [1, 'set'], [3, 'object'], [2, 'mapobj'], [2, 'listobj'], [1, 'any'],
];

function typeOfKind(kind, r) {
  switch (kind) {
    case 'string': return { t: 'string' };
    case 'bool': return { t: 'bool' };
    case 'number': return { t: 'number' };
    case 'list': return { t: 'list', of: { t: 'string' } };
    case 'map': return { t: 'map', of: { t: 'string' } };
    case 'set': return { t: 'set', of: { t: 'string' } };
    case 'object': return objectType(r);
    case 'mapobj': return { t: 'map', of: objectType(r, 1) };
    case 'listobj': return { t: 'list', of: objectType(r, 1) };
    default: return { t: 'any' };
  }
}

function defaultOf(type, r) {
  if (type.t === 'string') return r.chance(0.3) ? null : r.pick(STRINGS);
  if ((type.t === 'list' || type.t === 'map' || type.t === 'set') && r.chance(0.4)) return type.t === 'map' ? {} : [];
  if (type.t === 'object' && r.chance(0.3)) return {};
  return valueOf(type, r);
}

function makeVariable(r, name, kind, extra = {}) {
  const type = typeOfKind(kind, r);
  const v = {
    name,
    type,
    description: description(r, name),
    default: r.chance(0.9) ? defaultOf(type, r) : undefined,
    sensitive: (kind === 'string' && r.chance(0.05)) || undefined,
    nullable: (kind !== 'string' && r.chance(0.08)) ? false : undefined,
    validation: undefined,
    ...extra,
  };
  if (v.nullable === false && v.default === null) v.default = valueOf(type, r);
  if (kind === 'number' && r.chance(0.2)) v.validation = { condition: `var.${name} >= 0`, message: `The ${name} must not be negative.` };
  if (kind === 'string' && r.chance(0.1)) {
    v.validation = { condition: `var.${name} == null || can(regex("^[a-z0-9-_]+$", var.${name}))`, message: `The ${name} may only hold lower-case letters, digits, "-" and "_".` };
  }
  return v;
}

function freeVariable(r, unit) {
  const kind = r.weighted(VAR_KINDS);
  let name;
  for (let tries = 0; tries < 20; tries++) {
    name = `${r.pick(NOUNS)}_${r.pick(SUFFIX[kind])}`;
    if (!unit.vars.some((v) => v.name === name)) break;
    name = undefined;
  }
  name ??= `${r.pick(NOUNS)}_${r.pick(SUFFIX[kind])}_${unit.vars.length}`;
  return makeVariable(r, name, kind);
}

// ---- resources -------------------------------------------------------------

const GENERIC = [
  { type: 'aws_cloudwatch_log_group', short: 'log_group', attrs: [['retention_in_days', 'number'], ['kms_key_id', 'string'], ['skip_destroy', 'bool']] },
  { type: 'aws_s3_bucket', short: 'bucket', attrs: [['bucket_prefix', 'string'], ['force_destroy', 'bool'], ['object_lock_enabled', 'bool']] },
  { type: 'aws_sqs_queue', short: 'queue', attrs: [['visibility_timeout_seconds', 'number'], ['message_retention_seconds', 'number'], ['fifo_queue', 'bool'], ['kms_master_key_id', 'string']] },
  { type: 'aws_sns_topic', short: 'topic', attrs: [['display_name', 'string'], ['fifo_topic', 'bool'], ['kms_master_key_id', 'string']] },
  { type: 'aws_iam_role', short: 'role', attrs: [['path', 'string'], ['max_session_duration', 'number'], ['permissions_boundary', 'string'], ['description', 'string']] },
  { type: 'aws_kms_key', short: 'kms', attrs: [['deletion_window_in_days', 'number'], ['enable_key_rotation', 'bool'], ['multi_region', 'bool'], ['description', 'string']] },
  { type: 'aws_route_table', short: 'route_table', attrs: [['propagating_vgws', 'list']] },
  { type: 'aws_lb_target_group', short: 'target_group', attrs: [['port', 'number'], ['protocol', 'string'], ['deregistration_delay', 'number']] },
  { type: 'aws_ecr_repository', short: 'repository', attrs: [['image_tag_mutability', 'string'], ['force_delete', 'bool']] },
  { type: 'aws_db_subnet_group', short: 'db_subnet_group', attrs: [['subnet_ids', 'list'], ['description', 'string']] },
];

function addVar(unit, v) {
  if (!unit.vars.some((x) => x.name === v.name)) unit.vars.push(v);
}

function genericResource(r, unit, spec) {
  const name = unit.resources.some((x) => x.type === spec.type) ? `${spec.short}_${unit.resources.length}` : 'this';
  const prefix = spec.short;
  const attrs = spec.attrs.filter((_, i) => i === 0 || r.chance(0.7)).map(([attr, kind]) => {
    const varName = `${prefix}_${attr}`;
    addVar(unit, makeVariable(r, varName, kind));
    return [attr, `var.${varName}`];
  });
  addVar(unit, makeVariable(r, `create_${prefix}`, 'bool', { default: true }));
  addVar(unit, makeVariable(r, `${prefix}_tags`, 'map', { default: {} }));
  return { kind: 'generic', type: spec.type, name, prefix, attrs, extraTags: {} };
}

function securityGroupResource(r, unit) {
  const ruleType = {
    t: 'object',
    fields: [
      { name: 'description', type: { t: 'string' }, optional: true },
      { name: 'from_port', type: { t: 'number' }, optional: false },
      { name: 'to_port', type: { t: 'number' }, optional: false },
      { name: 'protocol', type: { t: 'string' }, optional: true, def: 'tcp' },
      { name: 'cidr_blocks', type: { t: 'list', of: { t: 'string' } }, optional: true, def: [] },
      { name: 'self', type: { t: 'bool' }, optional: true },
    ],
  };
  const rule = (port) => ({ description: `Allow ${port}`, from_port: lit(String(port)), to_port: lit(String(port)), cidr_blocks: ['10.0.0.0/8'] });
  addVar(unit, makeVariable(r, 'create_security_group', 'bool', { default: true }));
  addVar(unit, makeVariable(r, 'security_group_description', 'string', { default: 'Managed by Terraform', description: { heredoc: true, text: 'Description of the security group.\nChanging it forces a new security group.' } }));
  addVar(unit, makeVariable(r, 'vpc_id', 'string', { default: null }));
  addVar(unit, makeVariable(r, 'security_group_ingress_rules', 'listobj', { type: { t: 'list', of: ruleType }, default: [rule(443), rule(r.pick([80, 8080, 5432]))] }));
  addVar(unit, makeVariable(r, 'security_group_egress_rules', 'listobj', { type: { t: 'list', of: ruleType }, default: [{ from_port: lit('0'), to_port: lit('0'), protocol: '-1', cidr_blocks: ['0.0.0.0/0'] }] }));
  return { kind: 'sg', type: 'aws_security_group', name: 'this', extraTags: {} };
}

function subnetResource(r, unit) {
  const subnetType = {
    t: 'object',
    fields: [
      { name: 'cidr_block', type: { t: 'string' }, optional: false },
      { name: 'availability_zone', type: { t: 'string' }, optional: true },
      { name: 'public', type: { t: 'bool' }, optional: true, def: false },
      { name: 'enabled', type: { t: 'bool' }, optional: true, def: true },
      { name: 'tags', type: { t: 'map', of: { t: 'string' } }, optional: true, def: {} },
    ],
  };
  const subnets = {};
  ['a', 'b', 'c'].slice(0, r.int(2, 3)).forEach((az, i) => {
    subnets[`private-${az}`] = { cidr_block: `10.0.${i + 1}.0/24`, availability_zone: `eu-west-1${az}` };
  });
  addVar(unit, makeVariable(r, 'vpc_id', 'string', { default: null }));
  addVar(unit, makeVariable(r, 'private_route_table_id', 'string', { default: null }));
  addVar(unit, makeVariable(r, 'subnets', 'mapobj', { type: { t: 'map', of: subnetType }, default: subnets }));
  return { kind: 'subnets', type: 'aws_subnet', name: 'this', extraTags: {} };
}

function tagsExpr(base, res, indent) {
  const extra = { ...res.extraTags };
  const entries = Object.entries(extra);
  if (entries.length === 0) return `merge(${base.join(', ')})`;
  return `merge(\n${[...base, renderValue(extra, `${indent}  `)].map((x) => `${indent}  ${x},`).join('\n')}\n${indent})`;
}

function renderResource(res, unit) {
  const L = [];
  if (res.kind === 'generic') {
    L.push(`resource "${res.type}" "${res.name}" {`, `  count = local.create && var.create_${res.prefix} ? 1 : 0`, '');
    const width = Math.max(...res.attrs.map(([a]) => a.length), 4);
    L.push(`  ${'name'.padEnd(width)} = "\${local.name}-${res.prefix.replace(/_/g, '-')}"`);
    for (const [a, e] of res.attrs) if (a !== 'name') L.push(`  ${a.padEnd(width)} = ${e}`);
    L.push('', `  tags = ${tagsExpr(['local.tags', `var.${res.prefix}_tags`, `{ Name = "\${local.name}-${res.prefix.replace(/_/g, '-')}" }`], res, '  ')}`, '}');
  } else if (res.kind === 'sg') {
    L.push(
      `resource "aws_security_group" "${res.name}" {`,
      '  count = local.create && var.create_security_group ? 1 : 0',
      '',
      '  name_prefix = "${local.name}-"',
      '  description = var.security_group_description',
      '  vpc_id      = var.vpc_id',
      '',
    );
    for (const dir of ['ingress', 'egress']) {
      L.push(
        `  dynamic "${dir}" {`,
        `    for_each = var.security_group_${dir}_rules`,
        '',
        '    content {',
        `      description = try(${dir}.value.description, null)`,
        `      from_port   = ${dir}.value.from_port`,
        `      to_port     = ${dir}.value.to_port`,
        `      protocol    = ${dir}.value.protocol`,
        `      cidr_blocks = length(${dir}.value.cidr_blocks) > 0 ? ${dir}.value.cidr_blocks : null`,
        `      self        = lookup(${dir}.value, "self", null)`,
        '    }',
        '  }',
        '',
      );
    }
    L.push(`  tags = ${tagsExpr(['local.tags', '{ Name = local.name }'], res, '  ')}`, '', '  lifecycle {', '    create_before_destroy = true', '  }', '}');
  } else if (res.kind === 'subnets') {
    L.push(
      `resource "aws_subnet" "${res.name}" {`,
      '  for_each = { for k, v in var.subnets : k => v if local.create && v.enabled }',
      '',
      '  vpc_id                  = var.vpc_id',
      '  cidr_block              = each.value.cidr_block',
      '  availability_zone       = each.value.availability_zone',
      '  map_public_ip_on_launch = each.value.public',
      '',
      `  tags = ${tagsExpr(['local.tags', 'each.value.tags', '{ Name = "${local.name}-${each.key}" }'], res, '  ')}`,
      '}',
      '',
      'resource "aws_route_table_association" "this" {',
      '  for_each = { for k, s in aws_subnet.this : k => s.id if !var.subnets[k].public }',
      '',
      '  subnet_id      = each.value',
      '  route_table_id = var.private_route_table_id',
      '}',
    );
  }
  return L.join('\n');
}

function renderMain(unit, moduleName) {
  const parts = [
    [
      'locals {',
      '  create = var.create',
      `  name   = coalesce(var.name, "${moduleName}")`,
      '',
      '  tags = merge(var.tags, {',
      `    "terraform-module" = "${moduleName}"`,
      '  })',
      '',
      `  account_id = data.aws_caller_identity.current.account_id`,
      `  settings = ${renderValue(Object.fromEntries(unit.freeVars.map((n) => [n, lit(`var.${n}`)])), '  ')}`,
      '}',
    ].join('\n'),
    'data "aws_caller_identity" "current" {}\n\ndata "aws_partition" "current" {}',
    [
      'data "aws_iam_policy_document" "assume" {',
      '  statement {',
      '    sid     = "AssumeRole"',
      '    actions = ["sts:AssumeRole"]',
      '',
      '    principals {',
      '      type        = "Service"',
      `      identifiers = [${unit.principals.map((p) => hclString(p)).join(', ')}]`,
      '    }',
      '',
      '    condition {',
      '      test     = "StringEquals"',
      '      variable = "aws:SourceAccount"',
      '      values   = [local.account_id]',
      '    }',
      '  }',
      '}',
    ].join('\n'),
    ...unit.resources.map((res) => renderResource(res, unit)),
    ...unit.calls.map((c) =>
      [
        `module "${c.name}" {`,
        `  source = "${c.source}"`,
        '',
        '  create = local.create',
        `  name   = "\${local.name}-${c.name.replace(/_/g, '-')}"`,
        '  tags   = local.tags',
        '}',
      ].join('\n'),
    ),
  ];
  return `${parts.join('\n\n')}\n`;
}

function renderVariable(v) {
  const L = [`variable "${v.name}" {`];
  if (v.description.heredoc) L.push('  description = <<-EOT', ...v.description.text.split('\n').map((l) => `    ${l}`), '  EOT');
  else L.push(`  description = ${hclString(v.description.text)}`);
  L.push(`  type        = ${renderType(v.type, '  ')}`);
  if (v.default !== undefined) L.push(`  default     = ${renderValue(v.default, '  ')}`);
  if (v.sensitive) L.push('  sensitive   = true');
  if (v.nullable === false) L.push('  nullable    = false');
  if (v.validation) L.push('', '  validation {', `    condition     = ${v.validation.condition}`, `    error_message = ${hclString(v.validation.message)}`, '  }');
  L.push('}');
  return L.join('\n');
}

function renderVariables(unit) {
  return `${unit.vars.map(renderVariable).join('\n\n')}\n`;
}

function outputValue(res, attr) {
  if (res.kind === 'subnets') return `{ for k, v in aws_subnet.${res.name} : k => v.${attr} }`;
  return `try(${res.type}.${res.name}[0].${attr}, null)`;
}

function renderOutputs(unit) {
  return `${unit.outputs
    .map((o) =>
      [
        `output "${o.name}" {`,
        `  description = ${hclString(o.description)}`,
        `  value       = ${o.value}`,
        ...(o.sensitive ? ['  sensitive   = true'] : []),
        '}',
      ].join('\n'),
    )
    .join('\n\n')}\n`;
}

function renderVersions(unit) {
  const providers = Object.entries(unit.providers).map(([name, p]) =>
    [`    ${name} = {`, `      source  = "${p.source}"`, `      version = "${p.version}"`, '    }'].join('\n'),
  );
  return ['terraform {', `  required_version = "${unit.requiredVersion}"`, '', '  required_providers {', ...providers, '  }', '}', ''].join('\n');
}

function renderReadme(unit, title, usageSource, moduleName) {
  const esc = (s) => s.replace(/\|/g, '\\|').replace(/\n/g, '<br>');
  const L = [
    `# ${title}`,
    '',
    unit.summary,
    '',
    ...unit.notes.flatMap((n) => [n, '']),
    '## Usage',
    '',
    '```hcl',
    `module "${moduleName}" {`,
    `  source  = "${usageSource}"`,
    '',
    `  name = "example"`,
    '  tags = {',
    '    Environment = "dev"',
    '  }',
    '}',
    '```',
    '',
    '<!-- BEGIN_TF_DOCS -->',
    '## Requirements',
    '',
    '| Name | Version |',
    '|------|---------|',
    `| <a name="requirement_terraform"></a> [terraform](#requirement\\_terraform) | ${unit.requiredVersion} |`,
    ...Object.entries(unit.providers).map(([n, p]) => `| <a name="requirement_${n}"></a> [${n}](#requirement\\_${n}) | ${p.version} |`),
    '',
    '## Resources',
    '',
    '| Name | Type |',
    '|------|------|',
    ...unit.resources.map((res) => `| [${res.type}.${res.name}](https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/${res.type.replace(/^aws_/, '')}) | resource |`),
    '',
  ];
  if (unit.vars.length > 0) {
    L.push('## Inputs', '', '| Name | Description | Type | Default | Required |', '|------|-------------|------|---------|:--------:|');
    for (const v of [...unit.vars].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const def = v.default === undefined ? 'n/a' : `\`${esc(inlineValue(v.default))}\``;
      L.push(`| <a name="input_${v.name}"></a> [${v.name}](#input\\_${v.name}) | ${esc(v.description.text)} | \`${esc(inlineType(v.type))}\` | ${def} | ${v.default === undefined ? 'yes' : 'no'} |`);
    }
    L.push('');
  }
  if (unit.outputs.length > 0) {
    L.push('## Outputs', '', '| Name | Description |', '|------|-------------|');
    for (const o of unit.outputs) L.push(`| <a name="output_${o.name}"></a> [${o.name}](#output\\_${o.name}) | ${esc(o.description)} |`);
    L.push('');
  }
  L.push('<!-- END_TF_DOCS -->', '');
  return L.join('\n');
}

// ---- a module's model ------------------------------------------------------

const SUBMODULE_NAMES = ['iam', 'logging', 'endpoints', 'flow-logs', 'wrapper', 'kms', 'monitoring', 'backup'];
const EXAMPLE_NAMES = ['complete', 'simple', 'minimal', 'with-kms', 'ipv6'];
const PRINCIPALS = ['ec2.amazonaws.com', 'lambda.amazonaws.com', 'ecs-tasks.amazonaws.com', 'vpc-flow-logs.amazonaws.com', 'events.amazonaws.com'];

function newUnit(r, { kind, varTarget, resourceCount, moduleName }) {
  const unit = {
    vars: [],
    freeVars: [],
    resources: [],
    calls: [],
    outputs: [],
    principals: r.sample(PRINCIPALS, r.int(1, 2)),
    providers: { aws: { source: 'hashicorp/aws', version: r.pick(['>= 4.66', '>= 5.0', '>= 5.20', '~> 5.46']) } },
    requiredVersion: r.pick(['>= 1.0', '>= 1.3', '>= 1.5.7']),
    summary: `Terraform ${kind === 'root' ? 'module' : 'submodule'} which creates ${r.pick(NOUNS).replace(/_/g, ' ')} and ${r.pick(NOUNS).replace(/_/g, ' ')} resources on AWS for ${moduleName}.`,
    notes: [],
  };
  if (r.chance(0.3)) unit.providers.random = { source: 'hashicorp/random', version: '>= 3.1' };
  addVar(unit, makeVariable(r, 'create', 'bool', { default: true, description: { heredoc: false, text: 'Whether to create any resources at all.' } }));
  addVar(unit, makeVariable(r, 'name', 'string', { default: '', description: { heredoc: false, text: 'Name used on all resources as an identifier.' } }));
  addVar(unit, makeVariable(r, 'tags', 'map', { default: {}, description: { heredoc: false, text: 'A map of tags to add to all resources.' } }));
  if (kind === 'root') {
    unit.resources.push(securityGroupResource(r, unit));
    unit.resources.push(subnetResource(r, unit));
  }
  for (const spec of r.sample(GENERIC, resourceCount)) unit.resources.push(genericResource(r, unit, spec));
  while (unit.vars.length < varTarget) {
    const v = freeVariable(r, unit);
    unit.vars.push(v);
    unit.freeVars.push(v.name);
  }
  for (const res of unit.resources) {
    const base = res.prefix ?? (res.kind === 'sg' ? 'security_group' : 'subnet');
    const attrs = res.kind === 'subnets' ? ['id', 'arn'] : ['id', 'arn'].slice(0, r.int(1, 2));
    for (const attr of attrs) {
      const name = `${base}_${attr}${res.kind === 'subnets' ? 's' : ''}`;
      if (unit.outputs.some((o) => o.name === name)) continue;
      unit.outputs.push({ name, description: `The ${attr.toUpperCase()} of the ${base.replace(/_/g, ' ')}`, value: outputValue(res, attr), sensitive: r.chance(0.05) });
    }
  }
  return unit;
}

function newModule(r, index, { namePrefix }) {
  const moduleName = `${namePrefix}${index}`;
  const root = newUnit(r, { kind: 'root', varTarget: r.int(30, 60), resourceCount: r.int(2, 4), moduleName });
  const submodules = r.sample(SUBMODULE_NAMES, r.int(1, 3)).map((name) => ({
    name,
    unit: newUnit(r, { kind: 'sub', varTarget: r.int(10, 24), resourceCount: r.int(1, 3), moduleName: `${moduleName}/${name}` }),
  }));
  for (const s of submodules.slice(0, r.int(0, submodules.length))) {
    root.calls.push({ name: s.name.replace(/-/g, '_'), source: `./modules/${s.name}` });
  }
  const examples = r.sample(EXAMPLE_NAMES, r.int(1, 2)).map((name) => ({
    name,
    values: Object.fromEntries(
      r.sample(root.vars.filter((v) => !['create', 'name', 'tags'].includes(v.name)), r.int(3, 7)).map((v) => [v.name, valueOf(v.type, r)]),
    ),
    useSubmodule: submodules.length > 0 && r.chance(0.5) ? submodules[0].name : undefined,
    notes: [],
  }));
  return { moduleName, root, submodules, examples };
}

function renderExample(mod, ex) {
  const call = (name, source, values) =>
    [
      `module "${name}" {`,
      `  source = "${source}"`,
      '',
      '  name = local.name',
      ...Object.entries(values).map(([k, v]) => `  ${k} = ${renderValue(v, '  ')}`),
      '',
      '  tags = local.tags',
      '}',
    ].join('\n');
  const main = [
    'provider "aws" {',
    '  region = local.region',
    '}',
    '',
    'locals {',
    '  region = "eu-west-1"',
    '  name   = "ex-${basename(path.cwd)}"',
    '',
    '  tags = {',
    `    Example    = local.name`,
    `    Repository = "https://example.com/terraform-aws-${mod.moduleName}"`,
    '  }',
    '}',
    '',
    call(mod.moduleName.replace(/-/g, '_'), '../../', ex.values),
    '',
    `module "${mod.moduleName}_disabled" {`,
    '  source = "../../"',
    '',
    '  create = false',
    '}',
    ...(ex.useSubmodule ? ['', call(ex.useSubmodule.replace(/-/g, '_'), `../../modules/${ex.useSubmodule}`, {})] : []),
    '',
  ].join('\n');
  const outputs = `${mod.root.outputs
    .map((o) => [`output "${o.name}" {`, `  description = ${hclString(o.description)}`, `  value       = module.${mod.moduleName.replace(/-/g, '_')}.${o.name}`, '}'].join('\n'))
    .join('\n\n')}\n`;
  const readme = [
    `# ${ex.name} example`,
    '',
    `Configuration in this directory creates ${mod.moduleName} with the ${ex.name} set of arguments.`,
    '',
    ...ex.notes.flatMap((n) => [n, '']),
    '## Usage',
    '',
    '```bash',
    '$ terraform init',
    '$ terraform plan',
    '$ terraform apply',
    '```',
    '',
  ].join('\n');
  return { main, outputs, readme };
}

const LICENSE = `                                 Apache License
                           Version 2.0, January 2004
                        http://www.apache.org/licenses/

   TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION
${'   (synthetic licence text for the benchmark corpus)\n'.repeat(40)}`;

/** Every file of the module at its current state: path -> content. */
function renderModule(mod) {
  const files = new Map();
  const unitFiles = (prefix, unit, title, source) => {
    files.set(`${prefix}main.tf`, renderMain(unit, mod.moduleName));
    files.set(`${prefix}variables.tf`, renderVariables(unit));
    files.set(`${prefix}outputs.tf`, renderOutputs(unit));
    files.set(`${prefix}versions.tf`, renderVersions(unit));
    files.set(`${prefix}README.md`, renderReadme(unit, title, source, mod.moduleName));
  };
  files.set('.gitignore', '.terraform/\n*.tfstate\n*.tfstate.*\n.terraform.lock.hcl\n');
  files.set('LICENSE', LICENSE);
  unitFiles('', mod.root, `AWS ${mod.moduleName} Terraform module`, `bench/${mod.moduleName}/aws`);
  for (const s of mod.submodules) unitFiles(`modules/${s.name}/`, s.unit, `${mod.moduleName} ${s.name} submodule`, `bench/${mod.moduleName}/aws//modules/${s.name}`);
  for (const ex of mod.examples) {
    const { main, outputs, readme } = renderExample(mod, ex);
    files.set(`examples/${ex.name}/main.tf`, main);
    files.set(`examples/${ex.name}/outputs.tf`, outputs);
    files.set(`examples/${ex.name}/versions.tf`, renderVersions(mod.root));
    files.set(`examples/${ex.name}/README.md`, readme);
  }
  return files;
}

// ---- history ---------------------------------------------------------------

/** Changes from one tag to the next. Each returns whether it did anything, and whether it is a feature (minor bump). */
const OPS = [
  [4, 'addVariable'], [4, 'changeDefault'], [4, 'editReadme'], [1, 'bumpProvider'], [2, 'addOutput'],
  [3, 'tweakResource'], [2, 'editExample'], [2, 'changeDescription'],
];

function anyUnit(r, mod) {
  return r.chance(0.6) || mod.submodules.length === 0 ? mod.root : r.pick(mod.submodules).unit;
}

function applyOp(r, mod, op) {
  switch (op) {
    case 'addVariable': {
      const unit = anyUnit(r, mod);
      const v = freeVariable(r, unit);
      unit.vars.push(v);
      unit.freeVars.push(v.name);
      return { feature: true };
    }
    case 'changeDefault': {
      const unit = anyUnit(r, mod);
      const v = r.pick(unit.vars.filter((x) => x.default !== undefined));
      if (!v) return undefined;
      v.default = v.default === null ? valueOf(v.type, r) : defaultOf(v.type, r);
      return { feature: false };
    }
    case 'editReadme': {
      const target = r.chance(0.7) ? anyUnit(r, mod) : r.pick(mod.examples);
      const note = `${r.pick(['Note:', 'Tip:', 'Known issue:', 'Since this release,'])} ${sentence(r).toLowerCase()}.`;
      if (target.notes.length > 0 && r.chance(0.3)) target.notes[r.int(0, target.notes.length - 1)] = note;
      else target.notes.push(note);
      return { feature: false };
    }
    case 'bumpProvider': {
      const unit = mod.root;
      const [major, minor] = unit.providers.aws.version.replace(/[^0-9.]/g, '').split('.').map(Number);
      unit.providers.aws.version = `>= ${r.chance(0.1) ? major + 1 : major}.${r.chance(0.1) ? 0 : (minor ?? 0) + r.int(1, 9)}`;
      return { feature: false };
    }
    case 'addOutput': {
      const unit = anyUnit(r, mod);
      const res = r.pick(unit.resources);
      const attr = r.pick(['name', 'tags_all', 'owner_id', 'arn_suffix', 'url', 'zone_id']);
      const name = `${res.prefix ?? res.type.replace(/^aws_/, '')}_${attr}`;
      if (unit.outputs.some((o) => o.name === name)) return undefined;
      unit.outputs.push({ name, description: `The ${attr.replace(/_/g, ' ')} of the ${res.type}`, value: outputValue(res, attr), sensitive: false });
      return { feature: true };
    }
    case 'tweakResource': {
      const unit = anyUnit(r, mod);
      const res = r.pick(unit.resources);
      if (!res) return undefined;
      res.extraTags[r.pick(['Component', 'ManagedBy', 'CostCenter', 'Owner', 'Tier'])] = r.pick(['network', 'terraform', 'platform', 'shared', `v${r.int(1, 9)}`]);
      return { feature: false };
    }
    case 'editExample': {
      const ex = r.pick(mod.examples);
      const v = r.pick(mod.root.vars.filter((x) => !['create', 'name', 'tags'].includes(x.name)));
      ex.values[v.name] = valueOf(v.type, r);
      return { feature: false };
    }
    case 'changeDescription': {
      const unit = anyUnit(r, mod);
      const v = r.pick(unit.vars);
      v.description = description(r, v.name);
      return { feature: false };
    }
  }
  return undefined;
}

function diff(before, after) {
  const changed = new Set();
  for (const [path, text] of after) if (before.get(path) !== text) changed.add(path);
  for (const path of before.keys()) if (!after.has(path)) changed.add(path);
  return changed;
}

/**
 * The history of one module: its first tree in full, then for each later tag
 * only the files that changed (1-3 of them).
 */
export function moduleHistory({ index, versions, seed, namePrefix = 'm' }) {
  const r = createRng((seed * 1_000_003 + index * 7919) >>> 0);
  let mod = newModule(r, index, { namePrefix });
  let files = renderModule(mod);
  let version = r.chance(0.3) ? [0, r.int(1, 9), 0] : [1, 0, 0];
  const steps = [{ tag: `v${version.join('.')}`, files: new Map(files), message: 'Initial release' }];
  for (let i = 1; i < versions; i++) {
    const target = r.weighted([[45, 1], [35, 2], [20, 3]]);
    let changed = new Set();
    let feature = false;
    const applied = [];
    for (let attempt = 0; attempt < 25 && changed.size < target; attempt++) {
      const op = r.weighted(OPS);
      const candidate = structuredClone(mod);
      const result = applyOp(r, candidate, op);
      if (!result) continue;
      const nextFiles = renderModule(candidate);
      const nextChanged = diff(files, nextFiles);
      if (nextChanged.size === 0 || nextChanged.size > 3) continue;
      mod = candidate;
      changed = nextChanged;
      feature ||= result.feature;
      applied.push(op);
    }
    if (changed.size === 0) {
      mod.root.notes.push(`Release ${i}.`);
      changed = diff(files, renderModule(mod));
      applied.push('editReadme');
    }
    const nextFiles = renderModule(mod);
    const delta = new Map([...changed].map((p) => [p, nextFiles.get(p)]));
    files = nextFiles;
    if (r.chance(0.02)) version = [version[0] + 1, 0, 0];
    else if (feature) version = [version[0], version[1] + 1, 0];
    else version = [version[0], version[1], version[2] + 1];
    steps.push({ tag: `v${version.join('.')}`, files: delta, message: `${feature ? 'feat' : 'fix'}: ${applied.join(', ')}` });
  }
  return { name: `terraform-aws-${namePrefix}${index}`, steps };
}

// ---- writing repositories ---------------------------------------------------

const IDENTITY = { name: 'Bench Bot', email: 'bench@modmirror.invalid' };
const BASE_TIME = Date.UTC(2020, 0, 1) / 1000;

function run(cmd, args, { cwd, input, env } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd, env: env ? { ...process.env, ...env } : process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.stdin.on('error', () => {}); // an early exit is reported by 'close' with git's message
    child.on('close', (code) => {
      if (code === 0) resolvePromise(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`${cmd} ${args.join(' ')} failed (exit ${code}): ${Buffer.concat(err).toString('utf8').trim()}`));
    });
    child.stdin.end(input ?? '');
  });
}

/** Commit time of step k of module i: fixed, increasing within a repository. */
function commitTime(index, k) {
  return BASE_TIME + index * 3600 + k * 3 * 86400;
}

async function initRepo(dir) {
  await mkdir(dir, { recursive: true });
  await run('git', ['-c', 'init.defaultBranch=main', 'init', '-q', dir]);
  await run('git', ['config', 'user.name', IDENTITY.name], { cwd: dir });
  await run('git', ['config', 'user.email', IDENTITY.email], { cwd: dir });
  await run('git', ['config', 'commit.gpgsign', 'false'], { cwd: dir });
  await run('git', ['config', 'tag.gpgsign', 'false'], { cwd: dir });
}

/** One `git fast-import` for the whole history: fast, and the same commits as `git commit` would make. */
async function writeWithFastImport(dir, index, history) {
  const chunks = [];
  const data = (text) => {
    chunks.push(`data ${Buffer.byteLength(text)}\n`, text, '\n');
  };
  const who = `${IDENTITY.name} <${IDENTITY.email}>`;
  history.steps.forEach((step, k) => {
    const t = commitTime(index, k);
    chunks.push('commit refs/heads/main\n', `mark :${k + 1}\n`, `author ${who} ${t} +0000\n`, `committer ${who} ${t} +0000\n`);
    data(`${step.message}\n`);
    if (k > 0) chunks.push(`from :${k}\n`);
    for (const [path, content] of [...step.files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (content === undefined) chunks.push(`D ${path}\n`);
      else {
        chunks.push(`M 100644 inline ${path}\n`);
        data(content);
      }
    }
    chunks.push('\n', `reset refs/tags/${step.tag}\n`, `from :${k + 1}\n`, '\n');
  });
  await run('git', ['fast-import', '--quiet', '--done'], { cwd: dir, input: chunks.join('') + 'done\n' });
  await run('git', ['reset', '-q', '--hard', 'main'], { cwd: dir });
}

/** The plain way: write the work tree, `git add`, `git commit`, `git tag` per version (slower; same commit ids). */
async function writeWithCommits(dir, index, history) {
  for (const [k, step] of history.steps.entries()) {
    for (const [path, content] of step.files) {
      const file = join(dir, path);
      if (content === undefined) await rm(file, { force: true });
      else {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, content);
      }
    }
    const date = `${commitTime(index, k)} +0000`;
    const env = { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
    await run('git', ['add', '-A'], { cwd: dir });
    await run('git', ['commit', '-q', '--no-verify', '-m', step.message], { cwd: dir, env });
    await run('git', ['tag', step.tag], { cwd: dir, env });
  }
}

async function mapLimited(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i], i);
      }
    }),
  );
  return results;
}

/**
 * Creates `modules` repositories terraform-aws-m<N> (N from 0) in `dir`, each
 * with `versionsPerModule` tags. `method: 'commit'` uses git add/commit/tag
 * instead of fast-import (same commit ids, slower).
 * Returns the absolute repository paths and the total number of tags.
 */
export async function generateCorpus({ dir, modules, versionsPerModule, seed = 1, method = 'fast-import', namePrefix = 'm', concurrency = 4 }) {
  const root = resolve(dir);
  await mkdir(root, { recursive: true });
  const indexes = Array.from({ length: modules }, (_, i) => i);
  const repos = await mapLimited(indexes, concurrency, async (index) => {
    const history = moduleHistory({ index, versions: versionsPerModule, seed, namePrefix });
    const repo = join(root, history.name);
    await initRepo(repo);
    if (method === 'commit') await writeWithCommits(repo, index, history);
    else await writeWithFastImport(repo, index, history);
    return repo;
  });
  return { repos, tags: modules * versionsPerModule };
}

/** One module with a long history, like a popular public module (the AWS VPC module had 239 tags). */
export function generateBigModule({ dir, versions = 240, seed = 1, method }) {
  return generateCorpus({ dir, modules: 1, versionsPerModule: versions, seed, method });
}

/** Every file of every tag, rendered in memory (no git): for checking the generator. */
export function corpusSnapshots({ modules, versionsPerModule, seed = 1, namePrefix = 'm' }) {
  const out = [];
  for (let index = 0; index < modules; index++) {
    const history = moduleHistory({ index, versions: versionsPerModule, seed, namePrefix });
    let files = new Map();
    for (const step of history.steps) {
      files = new Map(files);
      for (const [p, c] of step.files) if (c === undefined) files.delete(p);
      else files.set(p, c);
      out.push({ repo: history.name, tag: step.tag, files });
    }
  }
  return out;
}
