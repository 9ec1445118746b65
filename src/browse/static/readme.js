// READMEs are untrusted input. The page renders each one as it is shown,
// with markdown-it (browse/markdown-it.min.js): raw HTML escaped rather than
// interpreted, only http(s), mailto and relative links kept, and images from
// hosts the mirror's config does not allow replaced by a link. A classic
// script, so the page's other script (and the tests, in a VM) can call it.
// Its one global is the function below: a classic script's top-level names are shared with the page's others.
/* exported createReadmeRenderer -- called by app.js and the tests */

/** `markdownit`: markdown-it's constructor; `imageHosts`: origins whose images the page may load. */
function createReadmeRenderer(markdownit, imageHosts) {
  'use strict';
  const SAFE_LINK = /^(https?:|mailto:|#|\/|\.{0,2}\/|[^:]*$)/i;
  const md = markdownit({ html: false, linkify: true, typographer: false });
  // markdown-it already refuses javascript:, vbscript:, file: and most data: URLs; keep to an allow-list on top.
  md.validateLink = (url) => SAFE_LINK.test(url.trim());
  const allowed = new Set(imageHosts.map((h) => new URL(h).origin));
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx];
    const src = token.attrGet('src') ?? '';
    const alt = md.utils.escapeHtml(token.content || 'image');
    let origin;
    try {
      origin = new URL(src).origin;
    } catch {
      origin = undefined;
    }
    if (origin !== undefined && allowed.has(origin)) return `<img src="${md.utils.escapeHtml(src)}" alt="${alt}" loading="lazy">`;
    // Not fetched: a relative image is not served by the mirror, a foreign one is not allowed.
    return origin === undefined
      ? `<span class="image-missing">[image: ${alt}]</span>`
      : `<a href="${md.utils.escapeHtml(src)}" rel="noopener noreferrer nofollow">[image: ${alt}]</a>`;
  };
  const defaultLink = md.renderer.rules.link_open ?? ((tokens, idx, opts, _env, self) => self.renderToken(tokens, idx, opts));
  md.renderer.rules.link_open = (tokens, idx, opts, env, self) => {
    tokens[idx].attrSet('rel', 'noopener noreferrer nofollow');
    return defaultLink(tokens, idx, opts, env, self);
  };
  return (markdown) => md.render(markdown);
}
