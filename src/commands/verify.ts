import { resolveMirrorConfig } from '../config/index.js';
import { printJson } from './args.js';
import { trustedKeys } from './key-flags.js';
import { mirrorArgument, openMirror } from './mirror-flag.js';
import type { VerifyFlags } from './options/verify.js';

export async function runVerify(values: VerifyFlags, positionals: string[] = []): Promise<number> {
  const given = mirrorArgument(values, 'verify', positionals[0], `modmirror verify ${positionals[0]}`, `modmirror verify --mirror ${positionals[0]}`);
  const { store, config } = await openMirror(values, 'verify', given, (out) => resolveMirrorConfig({ out, config: values.config }));
  // --trust: the truth must be signed by one of these keys before the archives are checked against it.
  const trusted = await trustedKeys(values, { trust: [] });
  let checked;
  try {
    checked = await store.verify({
      repair: values.repair === true,
      ...(values.complete === true ? { complete: { platforms: config.platforms } } : {}),
      ...(trusted ? { trusted } : {}),
    });
  } finally {
    store.close();
  }
  const { problems, repaired, warnings = [] } = checked;
  if (values.json === true)
    printJson({ dir: store.location, ok: problems.length === 0, problems, ...(warnings.length > 0 ? { warnings } : {}), ...(repaired ? { repaired } : {}) });
  else {
    if (repaired) console.log(repairedLine(repaired, store.shown));
    for (const w of warnings) console.error(`warning: ${store.shown}${w}`);
    for (const p of problems) console.error(`${store.shown}${p.path}: ${p.message}`);
    console.log(problems.length === 0 ? `${store.shown} is consistent.` : `${problems.length} problem(s) in ${store.shown}.`);
  }
  return problems.length === 0 ? 0 : 1;
}

function repairedLine(files: string[], shown: string): string {
  return files.length === 0
    ? `Repaired nothing: every derived document of ${shown} agrees with its manifest.`
    : `Repaired ${shown}: wrote ${files.length} derived documents again from its manifest.`;
}
