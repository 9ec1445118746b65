import { describe, expect, it } from 'vitest';
import { createReadmeRenderer } from '../../src/browse/markdown.js';

const render = await createReadmeRenderer({ imageHosts: ['https://img.example.com'] });

describe('README rendering', () => {
  it('escapes raw HTML instead of interpreting it', () => {
    const html = render('<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>');
    expect(html).not.toMatch(/<script|<img/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('keeps http(s), mailto and relative links, drops script URLs', () => {
    const html = render('[a](https://ok.example) [b](mailto:x@example.com) [c](./docs.md) [d](javascript:alert(1)) [e](JaVaScRiPt:alert(1)) [f](data:text/html,x) [g](vbscript:x)');
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
});
