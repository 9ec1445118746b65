// The README renderer exactly as the browse page runs it: the two scripts the
// page loads (markdown-it's browser build and src/browse/static/readme.js),
// run in a fresh VM context as a browser would run them.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';

const scripts = [createRequire(import.meta.url).resolve('markdown-it/dist/markdown-it.min.js'), join(ROOT, 'src/browse/static/readme.js')];
const page: Record<string, unknown> = { URL };
for (const script of scripts) runInNewContext(readFileSync(script, 'utf8'), page);
const create = page['createReadmeRenderer'] as (markdownit: unknown, imageHosts: string[]) => (markdown: string) => string;
const render = create(page['markdownit'], ['https://img.example.com']);

describe('README rendering', () => {
  it('escapes raw HTML instead of interpreting it', () => {
    const html = render('<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>');
    expect(html).not.toMatch(/<script|<img/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('keeps http(s), mailto and relative links, drops script URLs', () => {
    const html = render(
      '[a](https://ok.example) [b](mailto:x@example.com) [c](./docs.md) [d](javascript:alert(1)) [e](JaVaScRiPt:alert(1)) [f](data:text/html,x) [g](vbscript:x)',
    );
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    expect(hrefs).toEqual(['https://ok.example', 'mailto:x@example.com', './docs.md']);
    expect(html).toContain('rel="noopener noreferrer nofollow"');
  });

  it('shows images only from allowed hosts, others as links, relative ones as text', () => {
    expect(render('![ok](https://img.example.com/a.png)')).toContain('<img src="https://img.example.com/a.png" alt="ok" loading="lazy">');
    const foreign = render('![tracker](https://evil.example/p.png)');
    expect(foreign).not.toContain('<img');
    expect(foreign).toContain('<a href="https://evil.example/p.png" rel="noopener noreferrer nofollow">[image: tracker]</a>');
    expect(render('![diagram](docs/d.png)')).toContain('<span class="image-missing">[image: diagram]</span>');
  });

  it('renders tables and leaves the page one global', () => {
    expect(render('| a | b |\n|---|---|\n| 1 | 2 |\n')).toContain('<table>');
    expect(Object.keys(page).sort()).toEqual(['URL', 'createReadmeRenderer', 'markdownit']);
  });
});
