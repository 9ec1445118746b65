// Word lists the corpus draws names, values and descriptions from, and the
// sentences made of them.

export const NOUNS = [
  'vpc',
  'subnet',
  'nat_gateway',
  'flow_log',
  'route_table',
  'instance',
  'volume',
  'bucket',
  'queue',
  'topic',
  'log',
  'alarm',
  'cluster',
  'node_group',
  'endpoint',
  'dns',
  'kms',
  'iam_role',
  'policy',
  'secret',
  'backup',
  'cache',
  'listener',
  'target_group',
  'db',
  'snapshot',
  'replica',
  'gateway',
  'peering',
  'acl',
  'firewall',
  'trail',
];
export const SUFFIX = {
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
  'traffic',
  'encryption',
  'logging',
  'replication',
  'the primary',
  'each',
  'additional',
  'custom',
  'managed',
  'default',
  'regional',
  'cross-account',
  'private',
  'public',
  'retention',
  'lifecycle',
  'network',
  'monitoring',
  'capacity',
  'access',
];
export const FIELD_POOL = [
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
export const NUMBER_LITERALS = ['1e3', '3600', '30', '0.5', '2.5e-1', '86400', '5', '1024', '65535', '1e6', '7', '14', '300', '1.5'];
export const STRINGS = [
  'primary',
  'standard',
  'gp3',
  'INTELLIGENT_TIERING',
  'us-east-1a',
  '10.0.0.0/16',
  'tcp',
  'HTTPS',
  'auto',
  'on-demand',
  'arn:aws:iam::aws:policy/ReadOnlyAccess',
];

export function sentence(r) {
  return `${r.pick(['Controls', 'Determines', 'Specifies', 'Sets', 'Configures', 'Defines'])} ${r.pick(WORDS)} ${r.pick(WORDS)} for ${r.pick(WORDS)} ${r.pick(NOUNS).replace(/_/g, ' ')} resources`;
}

export function description(r, name) {
  if (r.chance(0.15)) {
    return {
      heredoc: true,
      text: `${sentence(r)}.\n${sentence(r)}; see the AWS documentation.\nSet to null to use the provider default for ${name}.`,
    };
  }
  const quoted = r.chance(0.1) ? ` Use "auto" to let AWS choose.` : '';
  return { heredoc: false, text: `${sentence(r)}.${quoted}` };
}
