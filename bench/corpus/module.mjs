// A module's model: a root unit, 1-3 submodules and a few to a dozen
// examples, each unit with its variables, resources, outputs and providers.
// files.mjs renders it. Sizes follow real public modules: most are medium,
// some large, a few like terraform-aws-vpc (230 inputs, 13 examples, a
// 107 KB README); `size: 'huge'` asks for one of those.

import { addVar, GENERIC, genericResource, outputValue, securityGroupResource, subnetResource } from './resources.mjs';
import { freeVariable, makeVariable, valueOf } from './variables.mjs';
import { NOUNS, sentence } from './words.mjs';

const sentences = (r, n) => Array.from({ length: n }, () => `${sentence(r)}.`).join(' ');

const SUBMODULE_NAMES = ['iam', 'logging', 'endpoints', 'flow-logs', 'wrapper', 'kms', 'monitoring', 'backup'];
const EXAMPLE_NAMES = [
  'complete',
  'simple',
  'minimal',
  'with-kms',
  'ipv6',
  'ipam',
  'secondary-cidr',
  'outpost',
  'separate-route-tables',
  'network-acls',
  'manage-default',
  'block-public-access',
  'issues',
  'vpc-flow-logs',
];
/** Inputs of the root, examples and submodules for each size of module. */
const SIZES = {
  medium: { rootVars: [30, 60], outputs: [5, 20], examples: [2, 4], submodules: [1, 3], paragraphs: [2, 6] },
  large: { rootVars: [60, 120], outputs: [20, 60], examples: [4, 8], submodules: [1, 3], paragraphs: [6, 14] },
  huge: { rootVars: [200, 260], outputs: [90, 130], examples: [11, 14], submodules: [2, 3], paragraphs: [24, 34] },
};
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
      unit.outputs.push({
        name,
        description: `The ${attr.toUpperCase()} of the ${base.replace(/_/g, ' ')}`,
        value: outputValue(res, attr),
        sensitive: r.chance(0.05),
      });
    }
  }
  return unit;
}

export function newModule(r, index, { namePrefix, size }) {
  const moduleName = `${namePrefix}${index}`;
  const shape =
    SIZES[
      size ??
        r.weighted([
          [60, 'medium'],
          [30, 'large'],
          [10, 'huge'],
        ])
    ];
  const root = newUnit(r, { kind: 'root', varTarget: r.int(...shape.rootVars), resourceCount: r.int(2, 4), moduleName });
  // Outputs beyond one per resource attribute: every example's README lists them all again.
  for (let i = 0, target = r.int(...shape.outputs); root.outputs.length < target && i < target * 3; i++) {
    const res = r.pick(root.resources);
    const attr = r.pick(['name', 'tags_all', 'owner_id', 'arn_suffix', 'url', 'zone_id', 'cidr_block', 'ipv6_cidr_block']);
    const name = `${res.prefix ?? res.type.replace(/^aws_/, '')}_${attr}_${i}`;
    root.outputs.push({ name, description: `The ${attr.replace(/_/g, ' ')} of the ${res.type} (${i})`, value: outputValue(res, attr), sensitive: false });
  }
  // Prose sections of the root README (usage notes, scenarios), as real READMEs have before their tables.
  root.sections = Array.from({ length: r.int(...shape.paragraphs) }, (_, i) => ({
    title: `${r.pick(NOUNS).replace(/_/g, ' ')} ${i + 1}`,
    body: sentences(r, r.int(3, 8)),
  }));
  const submodules = r.sample(SUBMODULE_NAMES, r.int(...shape.submodules)).map((name) => ({
    name,
    unit: newUnit(r, { kind: 'sub', varTarget: r.int(10, 24), resourceCount: r.int(1, 3), moduleName: `${moduleName}/${name}` }),
  }));
  for (const s of submodules.slice(0, r.int(0, submodules.length))) {
    root.calls.push({ name: s.name.replace(/-/g, '_'), source: `./modules/${s.name}` });
  }
  const examples = r.sample(EXAMPLE_NAMES, r.int(...shape.examples)).map((name) => ({
    name,
    values: Object.fromEntries(
      r
        .sample(
          root.vars.filter((v) => !['create', 'name', 'tags'].includes(v.name)),
          r.int(3, 7),
        )
        .map((v) => [v.name, valueOf(v.type, r)]),
    ),
    useSubmodule: submodules.length > 0 && r.chance(0.5) ? submodules[0].name : undefined,
    notes: [],
  }));
  return { moduleName, root, submodules, examples, changelog: [] };
}
