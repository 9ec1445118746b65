// A download location, read the way go-getter (Terraform's downloader)
// reads the forms registries use: an archive URL (decided by the path's
// extension or `?archive=`), relative to the download URL when it starts with
// `/`, `./` or `../`; `git::URL?ref=REF`; and `//subdir` after either to pick
// a folder inside (`//*`: the archive's single top folder).

import { MirrorError } from '../errors.js';

export type Location = { kind: 'archive'; url: URL; subdir: string } | { kind: 'git'; url: string; ref: string | undefined; subdir: string };

const GIT_SCHEMES = ['https:', 'http:', 'ssh:'];

export function parseLocation(location: string, downloadUrl: URL): Location {
  const unsupported = (why: string) =>
    new MirrorError('UPSTREAM_FAILED', `The download location "${location}" (from ${downloadUrl}) is not one sync can fetch: ${why}.`, {
      hint: 'sync fetches .tar.gz/.tgz URLs and git::https:// repositories; copy this module by hand into the module folder.',
    });
  const forced = /^([a-z0-9]+)::(.*)$/i.exec(location);
  if (forced && forced[1]!.toLowerCase() !== 'git') throw unsupported(`the "${forced[1]}::" getter is not supported`);
  const { address, subdir } = splitSubdir(forced ? forced[2]! : location);
  if (forced) {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      throw unsupported('the git address is not a URL');
    }
    if (!GIT_SCHEMES.includes(url.protocol)) throw unsupported(`git over ${url.protocol} is not allowed`);
    const ref = url.searchParams.get('ref') ?? undefined;
    url.searchParams.delete('ref');
    url.searchParams.delete('depth');
    return { kind: 'git', url: url.toString(), ref, subdir };
  }
  let url: URL;
  try {
    url = new URL(address, downloadUrl);
  } catch {
    throw unsupported('it is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw unsupported(`${url.protocol} URLs are not fetched`);
  const archive = url.searchParams.get('archive') ?? (/\.(tar\.gz|tgz)$/i.test(url.pathname) ? 'tar.gz' : /\.zip$/i.test(url.pathname) ? 'zip' : '');
  if (archive === 'zip') throw unsupported('zip archives are not supported yet');
  if (archive !== 'tar.gz' && archive !== 'tgz') throw unsupported('go-getter decides by extension, and this URL does not end in .tar.gz');
  url.searchParams.delete('archive');
  return { kind: 'archive', url, subdir };
}

/** `https://host/x.tar.gz//modules/vpc?ref=1` -> address without the subdir, and `modules/vpc`. */
function splitSubdir(address: string): { address: string; subdir: string } {
  const schemeEnd = address.indexOf('://');
  const from = schemeEnd === -1 ? 0 : schemeEnd + 3;
  const at = address.indexOf('//', from);
  if (at === -1) return { address, subdir: '' };
  const rest = address.slice(at + 2);
  const query = rest.indexOf('?');
  const subdir = (query === -1 ? rest : rest.slice(0, query)).replace(/^\/+|\/+$/g, '');
  if (subdir.split('/').some((s) => s === '..'))
    throw new MirrorError('UPSTREAM_FAILED', `The download location "${address}" names a subfolder outside the module.`);
  return { address: address.slice(0, at) + (query === -1 ? '' : rest.slice(query)), subdir };
}
