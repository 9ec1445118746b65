// Renders a module's model as the files of a repository: main.tf,
// variables.tf, outputs.tf, versions.tf and a terraform-docs style README per
// unit, the examples (each with its own README), a LICENSE and a CHANGELOG.

import { hclString, inlineType, inlineValue, lit, renderType, renderValue } from './hcl.mjs';
import { renderResource } from './resources.mjs';

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
    ...unit.resources.map((res) => renderResource(res)),
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
  if (v.validation)
    L.push('', '  validation {', `    condition     = ${v.validation.condition}`, `    error_message = ${hclString(v.validation.message)}`, '  }');
  L.push('}');
  return L.join('\n');
}

function renderVariables(unit) {
  return `${unit.vars.map(renderVariable).join('\n\n')}\n`;
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

const esc = (s) => s.replace(/\|/g, '\\|').replace(/\n/g, '<br>');

/** The start of terraform-docs' block: the Terraform and provider versions `unit` requires, as a table. */
function requirementsTable(unit) {
  return [
    '<!-- BEGIN_TF_DOCS -->',
    '## Requirements',
    '',
    '| Name | Version |',
    '|------|---------|',
    `| <a name="requirement_terraform"></a> [terraform](#requirement\\_terraform) | ${unit.requiredVersion} |`,
    ...Object.entries(unit.providers).map(([n, p]) => `| <a name="requirement_${n}"></a> [${n}](#requirement\\_${n}) | ${p.version} |`),
  ];
}

function renderReadme(unit, title, usageSource, moduleName, examples = []) {
  const L = [
    `# ${title}`,
    '',
    unit.summary,
    '',
    ...unit.notes.flatMap((n) => [n, '']),
    ...(unit.sections ?? []).flatMap((s) => [
      `## ${s.title[0].toUpperCase()}${s.title.slice(1)}`,
      '',
      s.body,
      '',
      '```hcl',
      `module "${moduleName}" {`,
      `  source = "${usageSource}"`,
      '',
      `  # ${s.title}`,
      '  create = true',
      '}',
      '```',
      '',
    ]),
    ...(examples.length > 0
      ? ['## Examples', '', ...examples.map((ex) => `- [${ex.name}](https://example.com/${moduleName}/tree/main/examples/${ex.name})`), '']
      : []),
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
    ...requirementsTable(unit),
    '',
    '## Resources',
    '',
    '| Name | Type |',
    '|------|------|',
    ...unit.resources.map(
      (res) =>
        `| [${res.type}.${res.name}](https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/${res.type.replace(/^aws_/, '')}) | resource |`,
    ),
    '',
  ];
  if (unit.vars.length > 0) {
    L.push('## Inputs', '', '| Name | Description | Type | Default | Required |', '|------|-------------|------|---------|:--------:|');
    for (const v of [...unit.vars].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const def = v.default === undefined ? 'n/a' : `\`${esc(inlineValue(v.default))}\``;
      L.push(
        `| <a name="input_${v.name}"></a> [${v.name}](#input\\_${v.name}) | ${esc(v.description.text)} | \`${esc(inlineType(v.type))}\` | ${def} | ${v.default === undefined ? 'yes' : 'no'} |`,
      );
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
    .map((o) =>
      [
        `output "${o.name}" {`,
        `  description = ${hclString(o.description)}`,
        `  value       = module.${mod.moduleName.replace(/-/g, '_')}.${o.name}`,
        '}',
      ].join('\n'),
    )
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
    "Note that this example may create resources which can cost money. Run `terraform destroy` when you don't need these resources.",
    '',
    ...requirementsTable(mod.root),
    '',
    '## Modules',
    '',
    '| Name | Source | Version |',
    '|------|--------|---------|',
    `| <a name="module_${mod.moduleName}"></a> [${mod.moduleName}](#module\\_${mod.moduleName}) | ../../ | n/a |`,
    `| <a name="module_${mod.moduleName}_disabled"></a> [${mod.moduleName}\\_disabled](#module\\_${mod.moduleName}\\_disabled) | ../../ | n/a |`,
    '',
    '## Inputs',
    '',
    'No inputs.',
    '',
    '## Outputs',
    '',
    '| Name | Description |',
    '|------|-------------|',
    ...mod.root.outputs.map((o) => `| <a name="output_${o.name}"></a> [${o.name}](#output\\_${o.name}) | ${esc(o.description)} |`),
    '<!-- END_TF_DOCS -->',
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
export function renderModule(mod) {
  const files = new Map();
  const unitFiles = (prefix, unit, title, source, examples) => {
    files.set(`${prefix}main.tf`, renderMain(unit, mod.moduleName));
    files.set(`${prefix}variables.tf`, renderVariables(unit));
    files.set(`${prefix}outputs.tf`, renderOutputs(unit));
    files.set(`${prefix}versions.tf`, renderVersions(unit));
    files.set(`${prefix}README.md`, renderReadme(unit, title, source, mod.moduleName, examples));
  };
  files.set('.gitignore', '.terraform/\n*.tfstate\n*.tfstate.*\n.terraform.lock.hcl\n');
  files.set('LICENSE', LICENSE);
  // Real modules keep a changelog that grows on every tag.
  if (mod.changelog?.length) files.set('CHANGELOG.md', `# Changelog\n\n${[...mod.changelog].reverse().join('\n')}`);
  unitFiles('', mod.root, `AWS ${mod.moduleName} Terraform module`, `bench/${mod.moduleName}/aws`, mod.examples);
  for (const s of mod.submodules)
    unitFiles(`modules/${s.name}/`, s.unit, `${mod.moduleName} ${s.name} submodule`, `bench/${mod.moduleName}/aws//modules/${s.name}`);
  for (const ex of mod.examples) {
    const { main, outputs, readme } = renderExample(mod, ex);
    files.set(`examples/${ex.name}/main.tf`, main);
    files.set(`examples/${ex.name}/outputs.tf`, outputs);
    files.set(`examples/${ex.name}/versions.tf`, renderVersions(mod.root));
    files.set(`examples/${ex.name}/README.md`, readme);
  }
  return files;
}
