// A module's history: the first tree in full, then per tag a few changes
// (new variable, new default, README edit, ...) that touch only 1-3 files,
// plus the root README on most tags and the changelog on every one.

import { newModule } from './module.mjs';
import { renderModule } from './files.mjs';
import { createRng } from './random.mjs';
import { outputValue } from './resources.mjs';
import { defaultOf, freeVariable, valueOf } from './variables.mjs';
import { description, sentence } from './words.mjs';

/** Changes from one tag to the next. Each returns whether it did anything, and whether it is a feature (minor bump). */
const OPS = [
  [4, 'addVariable'],
  [4, 'changeDefault'],
  [4, 'editReadme'],
  [1, 'bumpProvider'],
  [2, 'addOutput'],
  [3, 'tweakResource'],
  [2, 'editExample'],
  [2, 'changeDescription'],
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
      const [major, minor] = unit.providers.aws.version
        .replace(/[^0-9.]/g, '')
        .split('.')
        .map(Number);
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
      res.extraTags[r.pick(['Component', 'ManagedBy', 'CostCenter', 'Owner', 'Tier'])] = r.pick([
        'network',
        'terraform',
        'platform',
        'shared',
        `v${r.int(1, 9)}`,
      ]);
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
export function moduleHistory({ index, versions, seed, namePrefix = 'm', size }) {
  const r = createRng((seed * 1_000_003 + index * 7919) >>> 0);
  let mod = newModule(r, index, { namePrefix, size });
  let files = renderModule(mod);
  let version = r.chance(0.3) ? [0, r.int(1, 9), 0] : [1, 0, 0];
  const steps = [{ tag: `v${version.join('.')}`, files: new Map(files), message: 'Initial release' }];
  for (let i = 1; i < versions; i++) {
    const target = r.weighted([
      [45, 1],
      [35, 2],
      [20, 3],
    ]);
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
      applied.push('editReadme');
    }
    if (r.chance(0.02)) version = [version[0] + 1, 0, 0];
    else if (feature) version = [version[0], version[1] + 1, 0];
    else version = [version[0], version[1], version[2] + 1];
    // As in real histories, the README changes on most tags (release notes, regenerated tables) while most
    // .tf files do not, and the changelog on every one.
    if (r.chance(0.6)) {
      const note = `Since ${version.join('.')}: ${sentence(r).toLowerCase()}.`;
      if (mod.root.notes.length > 3 && r.chance(0.5)) mod.root.notes[r.int(0, mod.root.notes.length - 1)] = note;
      else mod.root.notes.push(note);
    }
    mod.changelog.push(`## ${version.join('.')}\n\n* ${applied.join(', ')}: ${sentence(r).toLowerCase()}\n`);
    const nextFiles = renderModule(mod);
    const delta = new Map([...diff(files, nextFiles)].map((p) => [p, nextFiles.get(p)]));
    files = nextFiles;
    steps.push({ tag: `v${version.join('.')}`, files: delta, message: `${feature ? 'feat' : 'fix'}: ${applied.join(', ')}` });
  }
  return { name: `terraform-aws-${namePrefix}${index}`, steps };
}
