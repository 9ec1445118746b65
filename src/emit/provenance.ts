// Each version's provenance: an in-toto Statement v1 whose subject is the
// version's archive and whose predicate is SLSA Provenance v1 (where the
// version came from: the repository, commit and tag, or the folder), in a DSSE
// envelope, signed when a signing key is given. One JSON line in
// ARCHIVE.intoto.jsonl beside the archive, as SLSA's tools look for it.
// The same inputs give the same bytes when unsigned: the statement's time is
// the version's own (its commit's, its folder's newest file), never the
// build's; and a published version's file is kept as it is (a signature's
// bytes differ each time it is made).

import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Staging } from '../mirror/staging.js';
import type { TrustedKey } from '../openpgp/detached.js';
import { envelopeOf, parseEnvelope, verifyEnvelope, type DsseEnvelope } from '../openpgp/dsse.js';
import type { PrivateSigningKey } from '../openpgp/keys.js';
import { addressKey, provenanceFile } from '../protocol/paths.js';
import type { VersionSource } from '../types.js';
import { VERSION } from '../version.js';

export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const SLSA_PROVENANCE = 'https://slsa.dev/provenance/v1';
export const IN_TOTO_PAYLOAD = 'application/vnd.in-toto+json';
const BUILD_TYPE = 'https://github.com/modmirror/modmirror/module-archive/v1';

/** Where a version came from, as the browse page and `verify` read it back. */
export interface ProvenanceSource {
  repository?: string;
  commit?: string;
  tag?: string;
  path?: string;
  fingerprint?: string;
}

/** The in-toto statement of the archive `archiveRel` (its sha256) built from `source`. */
export function statementOf(source: VersionSource, archiveRel: string, sha256: string): Record<string, unknown> {
  const { origin } = source;
  const module = addressKey(source.address);
  const externalParameters: Record<string, string> = { module, version: source.version };
  const resolvedDependencies: Array<Record<string, unknown>> = [];
  if (origin.kind === 'git') {
    // The module's source URL when its config gives one; else the repository modmirror read.
    const repository = source.meta.source || origin.gitDir;
    Object.assign(externalParameters, { repository, ref: `refs/tags/${source.tag}`, ...(origin.subdir ? { path: origin.subdir } : {}) });
    resolvedDependencies.push({ uri: `git+${repository}@refs/tags/${source.tag}`, digest: { gitCommit: origin.commit, gitTree: origin.tree } });
  } else {
    // A folder has no commit: its name and fingerprint (its files' names, sizes and times) are what can be told.
    Object.assign(externalParameters, { folder: basename(origin.dir), ...(source.meta.source ? { repository: source.meta.source } : {}) });
    resolvedDependencies.push({ name: basename(origin.dir), annotations: { fingerprint: source.fingerprint } });
  }
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: basename(archiveRel), digest: { sha256 } }],
    predicateType: SLSA_PROVENANCE,
    predicate: {
      buildDefinition: { buildType: BUILD_TYPE, externalParameters, internalParameters: {}, resolvedDependencies },
      runDetails: {
        builder: { id: `pkg:npm/modmirror@${VERSION}`, version: { modmirror: VERSION } },
        metadata: { invocationId: `${module}@${source.version}`, startedOn: source.publishedAt.toISOString(), finishedOn: source.publishedAt.toISOString() },
      },
    },
  };
}

/** The provenance file's one line: the statement in a DSSE envelope, signed by `signer` when given. */
export async function provenanceLine(source: VersionSource, archiveRel: string, sha256: string, signer: PrivateSigningKey | undefined): Promise<string> {
  const payload = Buffer.from(JSON.stringify(statementOf(source, archiveRel, sha256)), 'utf8');
  return JSON.stringify(await envelopeOf(IN_TOTO_PAYLOAD, payload, signer)) + '\n';
}

export interface ReadProvenance {
  envelope: DsseEnvelope;
  /** The subject's archive name and sha256. */
  subject: { name: string; sha256: string };
  source: ProvenanceSource;
}

/** A provenance file's text read back, or why it cannot be. */
export function readProvenance(text: string): ReadProvenance | string {
  const line = text.split('\n').find((l) => l.trim() !== '');
  if (line === undefined) return 'it is empty';
  const envelope = parseEnvelope(line);
  if (typeof envelope === 'string') return envelope;
  if (envelope.payloadType !== IN_TOTO_PAYLOAD) return `its payloadType is ${envelope.payloadType}, not ${IN_TOTO_PAYLOAD}`;
  let statement: {
    _type?: unknown;
    subject?: Array<{ name?: unknown; digest?: { sha256?: unknown } }>;
    predicateType?: unknown;
    predicate?: { buildDefinition?: { externalParameters?: Record<string, unknown>; resolvedDependencies?: Array<Record<string, unknown>> } };
  };
  try {
    statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as typeof statement;
  } catch {
    return 'its payload is not JSON';
  }
  if (statement._type !== STATEMENT_TYPE) return `its statement is not an in-toto ${STATEMENT_TYPE}`;
  const subject = statement.subject?.[0];
  if (typeof subject?.name !== 'string' || typeof subject.digest?.sha256 !== 'string') return 'its statement has no subject with a sha256';
  const params = statement.predicate?.buildDefinition?.externalParameters ?? {};
  const dependency = statement.predicate?.buildDefinition?.resolvedDependencies?.[0];
  const text_ = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const digest = dependency?.['digest'] as Record<string, unknown> | undefined;
  const annotations = dependency?.['annotations'] as Record<string, unknown> | undefined;
  const ref = text_(params['ref']);
  const source: ProvenanceSource = {
    repository: text_(params['repository']),
    commit: text_(digest?.['gitCommit']),
    tag: ref?.startsWith('refs/tags/') ? ref.slice('refs/tags/'.length) : undefined,
    path: text_(params['path']),
    fingerprint: text_(annotations?.['fingerprint']),
  };
  for (const k of Object.keys(source) as Array<keyof ProvenanceSource>) if (source[k] === undefined) delete source[k];
  return { envelope, subject: { name: subject.name, sha256: subject.digest.sha256 }, source };
}

/**
 * Writes the provenance of a version into `staging`. A version published with
 * these bytes (`published`) keeps the provenance file it has in `liveDir`:
 * published files never change.
 */
export async function writeProvenance(
  staging: Pick<Staging, 'write' | 'linkFrom'>,
  liveDir: string,
  source: VersionSource,
  archiveRel: string,
  sha256: string,
  published: boolean,
  signer: PrivateSigningKey | undefined,
): Promise<void> {
  const rel = provenanceFile(archiveRel);
  if (published && existsSync(join(liveDir, rel))) return staging.linkFrom(join(liveDir, rel), rel);
  await staging.write(rel, await provenanceLine(source, archiveRel, sha256, signer));
}

/**
 * Why a provenance file's signature is not accepted by `trusted`; undefined
 * when it is, or when the file is unsigned (an unsigned statement vouches for
 * nothing, and a bundle's own signature covers it).
 */
export async function provenanceSignatureProblem(text: string, trusted: TrustedKey[]): Promise<string | undefined> {
  const read = readProvenance(text);
  if (typeof read === 'string') return `is not a provenance statement: ${read}`;
  if (read.envelope.signatures.length === 0) return undefined;
  const checked = await verifyEnvelope(read.envelope, trusted);
  return checked.ok ? undefined : `its signature is not accepted: ${checked.detail}`;
}
