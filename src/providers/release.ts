// In-house provider releases, as a release pipeline leaves them (GoReleaser's
// terraform-provider template): the zips, TYPE_VERSION_SHA256SUMS, its
// binary detached signature TYPE_VERSION_SHA256SUMS.sig and an optional
// TYPE_VERSION_manifest.json naming the plugin protocol versions. scan.ts has
// already checked every zip against its SHA256SUMS line; here each release
// is authenticated as Terraform will check it: every zip SHA256SUMS lists is
// there, and the signature is by one of the accepted keys. A release with no
// signature is signed with the site's key, when one is configured. Every
// problem is named with its file before anything is written.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFolder } from '../config/providers.js';
import type { SigningConfig } from '../config/signing.js';
import { MirrorError, messageOf } from '../errors.js';
import {
  DEFAULT_PROVIDER_PROTOCOLS,
  parseProviderZipName,
  providerKey,
  providerReleaseManifestName,
  providerSignatureName,
  providerSumsName,
  type ProviderAddress,
} from '../protocol/providers.js';
import { readPrivateKeyFile, readPublicKeyFile, unlockSigningKey, type PrivateSigningKey, type SigningKey } from '../openpgp/keys.js';
import type { ProviderPackage } from './scan.js';
import { AuthenticationError, checksumEntries, signChecksums, verifyChecksumSignature } from './signature.js';

/** One authenticated in-house release: what the provider registry protocol serves besides the zips. */
export interface ProviderRelease {
  address: ProviderAddress;
  version: string;
  protocols: string[];
  /** The release's SHA256SUMS (its file in the input folder, and its bytes). */
  sumsFile: string;
  sums: Buffer;
  /** The binary detached signature: the release's own, or made here. */
  signature: Buffer;
  /** True when modmirror signed it (the release came without a .sig). */
  signedHere: boolean;
  /** The key that made the signature: the one the download documents list. */
  key: SigningKey;
  /** An upstream's release (serve --upstream): the signing keys as the upstream's download documents listed them. */
  upstream?: { keys: Record<string, unknown>[] };
}

export interface AuthenticateOptions {
  signing?: SigningConfig;
  /** A signature this mirror already holds for a checksum list, reused so a rebuild does not sign again. */
  previousSignature?: (address: ProviderAddress, version: string) => Buffer | undefined;
}

/** Authenticates the releases of every in-house folder; throws naming every problem. */
export async function authenticateReleases(
  folders: ProviderFolder[],
  packages: ProviderPackage[],
  options: AuthenticateOptions = {},
): Promise<ProviderRelease[]> {
  const problems: string[] = [];
  const releases: ProviderRelease[] = [];
  let signer: Promise<PrivateSigningKey> | undefined;
  let unlocked: Promise<PrivateSigningKey> | undefined;
  const getSigner = (unlock: boolean) => {
    signer ??= readPrivateKeyFile(options.signing!.keyFile);
    if (!unlock) return signer;
    const { keyFile, passphraseEnv } = options.signing!;
    unlocked ??= signer
      .then((s) => unlockSigningKey(s, keyFile, process.env[passphraseEnv]))
      .catch((error: unknown) => {
        const message = messageOf(error);
        throw new AuthenticationError(message.includes('none is set') ? `${message} (set ${passphraseEnv})` : message);
      });
    return unlocked;
  };
  for (const folder of folders) {
    if (folder.kind !== 'releases' || !folder.registry) continue;
    const keys: SigningKey[] = [];
    for (const file of folder.registry.keys) {
      try {
        keys.push(await readPublicKeyFile(file));
      } catch (error) {
        problems.push(messageOf(error));
      }
    }
    const groups = new Map<string, ProviderPackage[]>();
    for (const p of packages) {
      if (!p.file.startsWith(`${folder.dir}/`) || p.file.lastIndexOf('/') !== folder.dir.length) continue;
      const key = `${p.address.type}@${p.version}`;
      groups.set(key, [...(groups.get(key) ?? []), p]);
    }
    for (const group of groups.values()) {
      const { address, version } = group[0]!;
      const release = await authenticateRelease(folder.dir, address, version, group, keys, options, getSigner, problems);
      if (release) releases.push(release);
    }
  }
  // providers.v1 paths are NAMESPACE/TYPE: one host name each.
  const hostOf = new Map<string, ProviderRelease>();
  for (const r of releases) {
    const path = `${r.address.namespace}/${r.address.type}`;
    const other = hostOf.get(path);
    if (other && other.address.hostname !== r.address.hostname) {
      problems.push(
        `${r.sumsFile}: ${path} is also published as ${providerKey(other.address)} (${other.sumsFile}); one registry serves one ${path}, so give both entries the same hostname`,
      );
    }
    if (!other) hostOf.set(path, r);
  }
  if (problems.length > 0) {
    // A passphrase that is not set is the one problem no signing step fixes: say where it goes.
    const locked = options.signing && problems.every((p) => p.includes('none is set'));
    throw new MirrorError('PROVIDER_INVALID', `${problems.length} problem(s) in the provider releases; nothing was written:\n${problems.join('\n')}`, {
      hint: locked
        ? `Put the signing key's passphrase in the environment variable ${options.signing!.passphraseEnv} (signing: passphraseEnv names another).`
        : 'Sign SHA256SUMS with a listed key (gpg --detach-sign), list the key that signed it, or configure signing: to sign unsigned releases.',
    });
  }
  return releases;
}

async function authenticateRelease(
  dir: string,
  address: ProviderAddress,
  version: string,
  packages: ProviderPackage[],
  keys: SigningKey[],
  options: AuthenticateOptions,
  getSigner: (unlock: boolean) => Promise<PrivateSigningKey>,
  problems: string[],
): Promise<ProviderRelease | undefined> {
  const sumsFile = join(dir, providerSumsName(address.type, version));
  const sums = readFileSync(sumsFile);
  const before = problems.length;
  // A platform the checksum list promises but the folder lacks would be a 404 to every user of that platform.
  const present = new Set(packages.map((p) => p.file.slice(dir.length + 1)));
  for (const [name] of checksumEntries(sums)) {
    const parsed = parseProviderZipName(name);
    if (parsed && parsed.type === address.type && parsed.version === version && !present.has(name)) {
      problems.push(`${sumsFile}: lists ${name}, which is not in ${dir}`);
    }
  }
  const protocols = readProtocols(join(dir, providerReleaseManifestName(address.type, version)), problems);
  const sigFile = join(dir, providerSignatureName(address.type, version));
  let signature: Buffer;
  let key: SigningKey;
  let signedHere = false;
  if (existsSync(sigFile)) {
    signature = readFileSync(sigFile);
    const accepted = [...keys];
    if (options.signing) {
      try {
        accepted.push((await getSigner(false)).public);
      } catch (error) {
        problems.push(messageOf(error));
        return undefined;
      }
    }
    if (accepted.length === 0) {
      problems.push(`${sigFile}: no public key is given to check it with (--public-key FILE, or keys: in the config's providers entry)`);
      return undefined;
    }
    try {
      const keyId = await verifyChecksumSignature(sums, signature, accepted, { keysAre: 'the keys given are' });
      key = accepted.find((k) => k.keyId === keyId)!;
    } catch (error) {
      problems.push(`${sigFile}: ${error instanceof AuthenticationError ? error.message : messageOf(error)}`);
      return undefined;
    }
  } else {
    if (!options.signing) {
      problems.push(
        `${sumsFile}: the release is unsigned (no ${providerSignatureName(address.type, version)} beside it), and no signing key is configured to sign it (signing: key in the config, or --signing-key)`,
      );
      return undefined;
    }
    let signer: PrivateSigningKey;
    try {
      signer = await getSigner(false);
    } catch (error) {
      problems.push(messageOf(error));
      return undefined;
    }
    key = signer.public;
    const previous = options.previousSignature?.(address, version);
    if (previous && (await stillValid(sums, previous, key))) {
      signature = previous;
    } else {
      try {
        signature = await signChecksums(sums, await getSigner(true));
      } catch (error) {
        problems.push(messageOf(error));
        return undefined;
      }
    }
    signedHere = true;
  }
  if (problems.length > before) return undefined;
  return { address, version, protocols, sumsFile, sums, signature, signedHere, key };
}

async function stillValid(sums: Buffer, signature: Buffer, key: SigningKey): Promise<boolean> {
  try {
    await verifyChecksumSignature(sums, signature, [key]);
    return true;
  } catch {
    return false;
  }
}

/** GoReleaser's manifest: {"version": 1, "metadata": {"protocol_versions": ["6.0"]}}; absent: 5.0. */
function readProtocols(file: string, problems: string[]): string[] {
  if (!existsSync(file)) return [...DEFAULT_PROVIDER_PROTOCOLS];
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as { metadata?: { protocol_versions?: unknown } };
    const protocols = value.metadata?.protocol_versions;
    if (protocols === undefined) return [...DEFAULT_PROVIDER_PROTOCOLS];
    if (Array.isArray(protocols) && protocols.length > 0 && protocols.every((p) => typeof p === 'string' && /^\d+\.\d+$/.test(p))) return protocols as string[];
    problems.push(`${file}: metadata.protocol_versions ${JSON.stringify(protocols)} is not a list of versions such as ["5.0"]`);
  } catch (error) {
    problems.push(`${file}: does not parse: ${messageOf(error)}`);
  }
  return [...DEFAULT_PROVIDER_PROTOCOLS];
}

/** `HOSTNAME/NAMESPACE/TYPE VERSION`, for messages. */
export const releaseLabel = (r: { address: ProviderAddress; version: string }) => `${providerKey(r.address)} ${r.version}`;
