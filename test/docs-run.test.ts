// Every shell block README.md and docs/ mark with `<!-- run: NAME -->` (the
// line before its fence) runs here as written: bash -euo pipefail, in a temp
// folder, with the installed package's `modmirror` first on PATH
// (test/packed.ts), after the fixtures a reader of that section would have,
// which each scenario below states. It must exit 0 and leave what its guide
// says. The one change: the reader's machine folders the docs name (/srv/,
// /run/secrets/) are under the scenario's own folder. Blocks that need the
// network, a bucket, Terraform Cloud or root stay unmarked. The README's quick
// start is test/package.test.ts's.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, mirrorManifest, ROOT, tempDir, writeFiles } from './helpers.js';
import { installPacked, type PackedInstall } from './packed.js';
import { signRelease, testKey } from './providers/keys.js';
import { writeReleaseFolder } from './providers/zips.js';

const dir = tempDir('mm-docs-run-');
let packed: PackedInstall;

beforeAll(async () => {
  packed = await installPacked(dir);
}, 300_000);

interface Marked {
  file: string;
  name: string;
  script: string;
}

const DOC_FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The blocks the docs mark to run, each the ```sh fence right after its marker. */
function markedBlocks(): Marked[] {
  const blocks: Marked[] = [];
  for (const file of DOC_FILES) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const marker of text.matchAll(/<!-- run: ([\w-]+) -->\n/g)) {
      const block = /^```(?:sh|bash)\n([\s\S]*?)\n```/.exec(text.slice(marker.index + marker[0].length));
      if (!block) throw new Error(`${file}: <!-- run: ${marker[1]} --> is not followed by a \`\`\`sh block`);
      blocks.push({ file, name: marker[1]!, script: block[1]! });
    }
  }
  return blocks;
}

interface Scenario {
  /** The block's marker. */
  name: string;
  /** The folder it runs in: the scenarios of one folder run in this order, each on what the one before left. */
  folder: string;
  /** What the reader has before the block, made here. */
  fixtures?: (cwd: string, machine: string) => Promise<void>;
  /** What the guide says the block leaves. */
  check: (cwd: string, machine: string, output: string) => void;
}

/** A module's repository whose tags are its versions: `../terraform-aws-vpc` beside the working folder. */
function vpcRepository(cwd: string, tags: string[]): void {
  makeRepo(
    join(cwd, '..', 'terraform-aws-vpc'),
    tags.map((tag, i) => ({
      date: `2024-0${i + 1}-01T00:00:00Z`,
      files: { 'main.tf': `variable "cidr" {}\n${'variable "name" {}\n'.repeat(i)}`, 'README.md': '# vpc\n' },
      tags: [tag],
    })),
  );
}

/** A provider release as GoReleaser leaves it in `dist/` (after `--clean`), signed by the key in keys/acme-release.pub.asc. */
async function goreleaserDist(cwd: string, version: string): Promise<void> {
  rmSync(join(cwd, 'dist'), { recursive: true, force: true });
  mkdirSync(join(cwd, 'keys'), { recursive: true });
  const key = await testKey(join(cwd, 'keys'), 'Acme Release');
  await writeReleaseFolder(join(cwd, 'dist'), 'widgets', version, ['linux_amd64', 'darwin_arm64']);
  await signRelease(join(cwd, 'dist'), 'widgets', version, key);
  // The private half signed in the pipeline's own step; the publish has the public key alone.
  rmSync(key.privateFile);
}

/** The JSON lines a block printed (its --json commands). */
const jsonLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const versionsOf = (mirror: string, key: string) =>
  (mirrorManifest(mirror) as { modules: Record<string, { versions: { version: string }[] }> }).modules[key]?.versions.map((v) => v.version);
const providerVersionsOf = (mirror: string, key: string) =>
  (mirrorManifest(mirror) as { providers?: Record<string, { versions: { version: string }[] }> }).providers?.[key]?.versions.map((v) => v.version);
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>[];

const SCENARIOS: Scenario[] = [
  {
    name: 'readme-release-pipeline',
    folder: 'readme',
    fixtures: async (cwd) => vpcRepository(cwd, ['v2.4.0', 'v2.5.0']),
    check: (_cwd, machine) => expect(versionsOf(join(machine, 'srv/mirror/dist'), 'acme/vpc/aws')).toEqual(['2.5.0', '2.4.0']),
  },
  {
    name: 'readme-in-house-providers',
    folder: 'readme',
    // Into the mirror the release pipeline above started.
    fixtures: (cwd) => goreleaserDist(cwd, '1.2.0'),
    check: (_cwd, machine) => {
      const mirror = join(machine, 'srv/mirror/dist');
      expect(providerVersionsOf(mirror, 'registry.example.com/acme/widgets')).toEqual(['1.2.0']);
      expect(versionsOf(mirror, 'acme/vpc/aws')).toEqual(['2.5.0', '2.4.0']);
      expect(existsSync(join(mirror, 'v1/providers/acme/widgets/1.2.0/download/linux/amd64'))).toBe(true);
    },
  },
  {
    name: 'release-publish',
    folder: 'release',
    fixtures: async (cwd) => {
      vpcRepository(cwd, ['v2.4.0', 'v2.5.0']);
      writeFiles(cwd, {
        'mirror.config.yaml': 'sources:\n  - git: ../terraform-aws-vpc\n    namespace: acme\n',
        'drop/acme/vpc/aws/2.6.0/main.tf': 'variable "cidr" {}\n',
        'build/main.tf': 'variable "cidr" {}\nvariable "zones" {}\n',
      });
    },
    check: (cwd, _machine, output) => {
      expect(jsonLines(output)).toEqual([expect.objectContaining({ module: 'acme/vpc/aws', version: '2.5.0', outcome: 'would-publish', dryRun: true })]);
      expect(versionsOf(join(cwd, 'dist'), 'acme/vpc/aws')).toEqual(['2.7.0', '2.6.0', '2.5.0', '2.4.0']);
    },
  },
  {
    name: 'release-deprecate',
    folder: 'release',
    check: (cwd, _machine, output) => {
      expect(output).toMatch(/2\.4\.0/);
      // Deprecated, then lifted: the mirror's versions list shows no deprecation.
      const versions = JSON.parse(readFileSync(join(cwd, 'dist/v1/modules/acme/vpc/aws/versions'), 'utf8')) as {
        modules: { versions: { version: string; deprecation?: unknown }[] }[];
      };
      expect(versions.modules[0]!.versions.find((v) => v.version === '2.4.0')).not.toHaveProperty('deprecation');
    },
  },
  {
    name: 'in-house-first-release',
    folder: 'in-house',
    fixtures: (cwd) => goreleaserDist(cwd, '1.2.0'),
    check: (_cwd, machine) => {
      const mirror = join(machine, 'srv/mirror/dist');
      expect(providerVersionsOf(mirror, 'registry.example.com/acme/widgets')).toEqual(['1.2.0']);
      expect((mirrorManifest(mirror) as { providers_hostname?: string }).providers_hostname).toBe('registry.example.com');
    },
  },
  {
    name: 'in-house-later-release',
    folder: 'in-house',
    // The next release's pipeline: GoReleaser's dist/ holds 1.3.0.
    fixtures: (cwd) => goreleaserDist(cwd, '1.3.0'),
    check: (_cwd, machine, output) => {
      expect(jsonLines(output)).toEqual([
        expect.objectContaining({ provider: 'registry.example.com/acme/widgets', version: '1.3.0', outcome: 'would-publish', dryRun: true }),
      ]);
      expect(providerVersionsOf(join(machine, 'srv/mirror/dist'), 'registry.example.com/acme/widgets')).toEqual(['1.3.0', '1.2.0']);
    },
  },
  {
    name: 'management-setup',
    folder: 'management',
    // alice's password, where the pipeline's secrets are.
    fixtures: async (_cwd, machine) => writeFiles(machine, { 'run/secrets/alice': 'correct horse battery staple\n' }),
    check: (_cwd, machine) => {
      const data = join(machine, 'srv/mirror-data');
      expect(readJson(join(data, 'users.json')).map((u) => u['username'])).toEqual(['admin', 'alice']);
      const orgs = readJson(join(data, 'organizations.json'));
      expect(orgs.map((o) => o['name'])).toEqual(['acme', 'beta', 'gamma']);
      // The second share is the one that stays: providers to beta and gamma, modules to everyone.
      expect(orgs[0]).toMatchObject({ globalModuleSharing: true, moduleConsumers: [], globalProviderSharing: false, providerConsumers: ['beta', 'gamma'] });
      expect(readJson(join(data, 'tokens.json')).map((t) => t['kind'])).toEqual(['user', 'team', 'organization']);
      expect(JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8'))).toMatchObject({ edition: 'self-hosted' });
    },
  },
  {
    name: 'management-run-task',
    folder: 'management',
    check: (_cwd, machine, output) => {
      expect(jsonLines(output)).toEqual([expect.objectContaining({ run: 'run-123' })]);
      expect(readJson(join(machine, 'srv/mirror-data/runs.json')).map((r) => r['id'])).toEqual(['run-123']);
    },
  },
  {
    name: 'dist-layout-verify',
    folder: 'verify',
    // A built mirror in the working folder's dist/, and one at /srv/mirror/dist.
    fixtures: async (cwd, machine) => {
      writeFiles(cwd, { 'modules/acme/hello/null/1.0.0/main.tf': 'variable "name" {}\n' });
      for (const mirror of ['dist', join(machine, 'srv/mirror/dist')]) {
        const built = await packed.modmirror(['build', '--modules', 'modules', '--mirror', mirror], cwd);
        expect(built.code, built.stderr).toBe(0);
      }
    },
    check: (_cwd, _machine, output) => {
      expect(output).toContain('dist/ is consistent.');
      expect(jsonLines(output)).toEqual([expect.objectContaining({ problems: [] })]);
    },
  },
];

/** The docs' machine folders, under `machine`: the one change made to a block. */
const onMachine = (script: string, machine: string) =>
  script.replace(/(^|[\s='"])(\/srv\/|\/run\/secrets\/)/gm, (_, before: string, root: string) => `${before}${machine}${root}`);

describe('the blocks the docs mark to run', () => {
  const marked = markedBlocks();

  it('each have a scenario here, and each scenario a marked block', () => {
    expect(marked.map((b) => b.name).sort()).toEqual(SCENARIOS.map((s) => s.name).sort());
    expect(new Set(marked.map((b) => b.name)).size).toBe(marked.length);
  });

  for (const scenario of SCENARIOS) {
    const block = marked.find((b) => b.name === scenario.name);
    it(`${block?.file ?? '(unmarked)'}: ${scenario.name} runs as written and leaves what it says`, async () => {
      expect(block, `a block marked <!-- run: ${scenario.name} -->`).toBeDefined();
      const cwd = join(dir, scenario.folder, 'work');
      const machine = join(dir, scenario.folder, 'machine');
      mkdirSync(cwd, { recursive: true });
      mkdirSync(machine, { recursive: true });
      await scenario.fixtures?.(cwd, machine);
      const result = await packed.runScript(onMachine(block!.script, machine), cwd);
      expect(result.code, result.output).toBe(0);
      scenario.check(cwd, machine, result.output);
    }, 120_000);
  }
});
