// READMEs are untrusted input: rendered to HTML at build time with raw HTML
// escaped (not interpreted), only http(s)/mailto/relative links kept, and
// images from other hosts replaced by a link unless the config allows them.

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

export interface ReadmeOptions {
  /** Origins (`https://img.example.com`) whose images the page may load. */
  imageHosts: string[];
}

const SAFE_LINK = /^(https?:|mailto:|#|\/|\.{0,2}\/|[^:]*$)/i;

/** markdown-it is loaded on first use: a publish whose READMEs did not change never needs it. */
export async function createReadmeRenderer(options: ReadmeOptions): Promise<(markdown: string) => string> {
  const { default: MarkdownIt } = await import('markdown-it');
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
  // markdown-it already refuses javascript:, vbscript:, file: and most data: URLs; keep to an allow-list on top.
  md.validateLink = (url) => SAFE_LINK.test(url.trim());
  const allowed = new Set(options.imageHosts.map((h) => new URL(h).origin));
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx]!;
    const src = token.attrGet('src') ?? '';
    const alt = md.utils.escapeHtml(token.content || 'image');
    let origin: string | undefined;
    try {
      origin = new URL(src).origin;
    } catch {
      origin = undefined;
    }
    if (origin !== undefined && allowed.has(origin)) return `<img src="${md.utils.escapeHtml(src)}" alt="${alt}" loading="lazy">`;
    // Not fetched: a relative image is not served by the mirror, a foreign one is not allowed.
    return origin === undefined ? `<span class="image-missing">[image: ${alt}]</span>` : `<a href="${md.utils.escapeHtml(src)}" rel="noopener noreferrer nofollow">[image: ${alt}]</a>`;
  };
  const defaultLink = md.renderer.rules.link_open ?? ((tokens, idx, opts, _env, self) => self.renderToken(tokens, idx, opts));
  md.renderer.rules.link_open = (tokens, idx, opts, env, self) => {
    tokens[idx]!.attrSet('rel', 'noopener noreferrer nofollow');
    return defaultLink(tokens, idx, opts, env, self);
  };
  return (markdown) => md.render(markdown);
}

/** A rendering as it is stored: named by the sha256 of its HTML, gzipped (README HTML compresses about ninefold). */
export interface StoredRendering {
  digest: string;
  data: Buffer;
}

export function storedRendering(html: string): StoredRendering {
  return { digest: createHash('sha256').update(html).digest('hex'), data: gzipSync(html) };
}
