// Resources of a module: generic ones with their variables, a security group
// with dynamic blocks and a for_each of subnets; their HCL and output values.

import { lit, renderValue } from './hcl.mjs';
import { makeVariable } from './variables.mjs';

export const GENERIC = [
  {
    type: 'aws_cloudwatch_log_group',
    short: 'log_group',
    attrs: [
      ['retention_in_days', 'number'],
      ['kms_key_id', 'string'],
      ['skip_destroy', 'bool'],
    ],
  },
  {
    type: 'aws_s3_bucket',
    short: 'bucket',
    attrs: [
      ['bucket_prefix', 'string'],
      ['force_destroy', 'bool'],
      ['object_lock_enabled', 'bool'],
    ],
  },
  {
    type: 'aws_sqs_queue',
    short: 'queue',
    attrs: [
      ['visibility_timeout_seconds', 'number'],
      ['message_retention_seconds', 'number'],
      ['fifo_queue', 'bool'],
      ['kms_master_key_id', 'string'],
    ],
  },
  {
    type: 'aws_sns_topic',
    short: 'topic',
    attrs: [
      ['display_name', 'string'],
      ['fifo_topic', 'bool'],
      ['kms_master_key_id', 'string'],
    ],
  },
  {
    type: 'aws_iam_role',
    short: 'role',
    attrs: [
      ['path', 'string'],
      ['max_session_duration', 'number'],
      ['permissions_boundary', 'string'],
      ['description', 'string'],
    ],
  },
  {
    type: 'aws_kms_key',
    short: 'kms',
    attrs: [
      ['deletion_window_in_days', 'number'],
      ['enable_key_rotation', 'bool'],
      ['multi_region', 'bool'],
      ['description', 'string'],
    ],
  },
  { type: 'aws_route_table', short: 'route_table', attrs: [['propagating_vgws', 'list']] },
  {
    type: 'aws_lb_target_group',
    short: 'target_group',
    attrs: [
      ['port', 'number'],
      ['protocol', 'string'],
      ['deregistration_delay', 'number'],
    ],
  },
  {
    type: 'aws_ecr_repository',
    short: 'repository',
    attrs: [
      ['image_tag_mutability', 'string'],
      ['force_delete', 'bool'],
    ],
  },
  {
    type: 'aws_db_subnet_group',
    short: 'db_subnet_group',
    attrs: [
      ['subnet_ids', 'list'],
      ['description', 'string'],
    ],
  },
];

export function addVar(unit, v) {
  if (!unit.vars.some((x) => x.name === v.name)) unit.vars.push(v);
}

export function genericResource(r, unit, spec) {
  const name = unit.resources.some((x) => x.type === spec.type) ? `${spec.short}_${unit.resources.length}` : 'this';
  const prefix = spec.short;
  const attrs = spec.attrs
    .filter((_, i) => i === 0 || r.chance(0.7))
    .map(([attr, kind]) => {
      const varName = `${prefix}_${attr}`;
      addVar(unit, makeVariable(r, varName, kind));
      return [attr, `var.${varName}`];
    });
  addVar(unit, makeVariable(r, `create_${prefix}`, 'bool', { default: true }));
  addVar(unit, makeVariable(r, `${prefix}_tags`, 'map', { default: {} }));
  return { kind: 'generic', type: spec.type, name, prefix, attrs, extraTags: {} };
}

export function securityGroupResource(r, unit) {
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
  addVar(
    unit,
    makeVariable(r, 'security_group_description', 'string', {
      default: 'Managed by Terraform',
      description: { heredoc: true, text: 'Description of the security group.\nChanging it forces a new security group.' },
    }),
  );
  addVar(unit, makeVariable(r, 'vpc_id', 'string', { default: null }));
  addVar(
    unit,
    makeVariable(r, 'security_group_ingress_rules', 'listobj', { type: { t: 'list', of: ruleType }, default: [rule(443), rule(r.pick([80, 8080, 5432]))] }),
  );
  addVar(
    unit,
    makeVariable(r, 'security_group_egress_rules', 'listobj', {
      type: { t: 'list', of: ruleType },
      default: [{ from_port: lit('0'), to_port: lit('0'), protocol: '-1', cidr_blocks: ['0.0.0.0/0'] }],
    }),
  );
  return { kind: 'sg', type: 'aws_security_group', name: 'this', extraTags: {} };
}

export function subnetResource(r, unit) {
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

export function renderResource(res) {
  const L = [];
  if (res.kind === 'generic') {
    L.push(`resource "${res.type}" "${res.name}" {`, `  count = local.create && var.create_${res.prefix} ? 1 : 0`, '');
    const width = Math.max(...res.attrs.map(([a]) => a.length), 4);
    L.push(`  ${'name'.padEnd(width)} = "\${local.name}-${res.prefix.replace(/_/g, '-')}"`);
    for (const [a, e] of res.attrs) if (a !== 'name') L.push(`  ${a.padEnd(width)} = ${e}`);
    L.push(
      '',
      `  tags = ${tagsExpr(['local.tags', `var.${res.prefix}_tags`, `{ Name = "\${local.name}-${res.prefix.replace(/_/g, '-')}" }`], res, '  ')}`,
      '}',
    );
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

export function outputValue(res, attr) {
  if (res.kind === 'subnets') return `{ for k, v in aws_subnet.${res.name} : k => v.${attr} }`;
  return `try(${res.type}.${res.name}[0].${attr}, null)`;
}
