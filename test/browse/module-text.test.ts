// The module page's text helpers exactly as the browse page runs them:
// src/browse/static/module.js in a fresh VM context, as a browser runs it.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';

interface Input {
  name: string;
  type: string;
  required: boolean;
}
interface ModuleText {
  defaultAsHcl(text: string): string;
  readmeBody(markdown: string, description: string): string;
  provision(name: string, source: string, version: string, inputs: Input[]): string;
  calledModule(source: string): string | undefined;
}

const page: Record<string, unknown> = {};
runInNewContext(readFileSync(join(ROOT, 'src/browse/static/module.js'), 'utf8'), page);
const text = (page['createModuleText'] as () => ModuleText)();

describe('module page text', () => {
  it('shows defaults as HCL: objects with aligned keys, short lists inline, strings escaped', () => {
    expect(text.defaultAsHcl('{"name":"a","long_key":[1,2],"x-y":{"in":null}}')).toBe(
      '{\n  name     = "a"\n  long_key = [1, 2]\n  x-y      = {\n    in = null\n  }\n}',
    );
    expect(text.defaultAsHcl('{"a b":"${x}"}')).toBe('{\n  "a b" = "$${x}"\n}');
    expect(text.defaultAsHcl('[]')).toBe('[]');
    expect(text.defaultAsHcl('"10.0.0.0/16"')).toBe('"10.0.0.0/16"');
    // Not JSON (an expression kept as written): as it is.
    expect(text.defaultAsHcl('var.x')).toBe('var.x');
  });

  it("leaves out the README's title and the paragraph the description came from", () => {
    const readme = '# acme/x/aws\n\nDoes *things*.\n\n## Usage\n\nText.\n';
    expect(text.readmeBody(readme, 'Does things.')).toBe('## Usage\n\nText.\n');
    // Another first paragraph stays; so does a title that is not the first thing.
    expect(text.readmeBody(readme, 'Something else')).toBe('Does *things*.\n\n## Usage\n\nText.\n');
    expect(text.readmeBody('Intro.\n\n# Later\n', '')).toBe('Intro.\n\n# Later\n');
    expect(text.readmeBody('Title\n=====\n\nDoes things.\n', 'Does things.')).toBe('');
  });

  it('provisions a module with its required inputs to fill in', () => {
    const inputs = [
      { name: 'name', type: 'string', required: true },
      { name: 'subnets', type: 'map(object({\n  a = string\n}))', required: true },
      { name: 'tags', type: 'map(string)', required: false },
    ];
    expect(text.provision('net', 'reg.example.com/acme/net/aws', '1.0.0', inputs)).toBe(
      'module "net" {\n  source  = "reg.example.com/acme/net/aws"\n  version = "1.0.0"\n\n  # Required inputs\n  name    = "" # string\n  subnets = {} # map(object({ ...\n}\n',
    );
    expect(text.provision('net', 'h/a/net/aws', '1.0.0', [])).toBe('module "net" {\n  source  = "h/a/net/aws"\n  version = "1.0.0"\n}\n');
  });

  it('names the registry module a module call uses, and nothing for other sources', () => {
    expect(text.calledModule('registry.example.com/acme/network/aws')).toBe('acme/network/aws');
    expect(text.calledModule('acme/network/aws//modules/nat')).toBe('acme/network/aws');
    for (const other of ['./modules/nat', '../x', 'git::https://example.com/x.git', 'github.com/acme/x', 'https://example.com/x.zip', 's3::https://b/x'])
      expect(text.calledModule(other)).toBeUndefined();
  });
});
