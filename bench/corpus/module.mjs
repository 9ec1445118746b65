// A module's model: a root unit, 1-3 submodules and 1-2 examples, each unit
// with its variables, resources, outputs and providers. files.mjs renders it.

import { addVar, GENERIC, genericResource, outputValue, securityGroupResource, subnetResource } from './resources.mjs';
import { freeVariable, makeVariable, valueOf } from './variables.mjs';
import { NOUNS } from './words.mjs';

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

export function newModule(r, index, { namePrefix }) {
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
