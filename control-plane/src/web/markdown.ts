import MarkdownIt, { type RendererRule } from 'markdown-it';
import { raw, type Html } from './html.ts';

/**
 * Markdown written by a project's people (incident updates, postmortems) as HTML for public pages,
 * safe whatever it holds: raw HTML is not HTML (markdown-it with `html: false` escapes it), links
 * go to http, https and mailto addresses only (no `javascript:`, `data:`, `vbscript:` or relative
 * ones: those stay text), images are not loaded (the page fetches nothing from elsewhere: `![]()`
 * stays text), and links carry `rel="nofollow noopener noreferrer"`. Headings are moved down below
 * the page's own (an h1 of the text is an h4 under an incident's h3, an h3 in a postmortem's section).
 */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: true });
md.disable(['image']);
md.validateLink = (url: string) => /^(https?:\/\/|mailto:)/i.test(url.trim());

/** The level a `#` heading of the text becomes (the others follow it, down to h6). */
const moveHeading: RendererRule = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  const top = typeof env?.top === 'number' ? env.top : 4;
  token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + top - 1)}`;
  return self.renderToken(tokens, idx, options);
};
md.renderer.rules.heading_open = moveHeading;
md.renderer.rules.heading_close = moveHeading;
md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx]!.attrSet('rel', 'nofollow noopener noreferrer');
  return self.renderToken(tokens, idx, options);
};

/** The Markdown as HTML, in a `div.markdown`; its `#` headings at level `top` (default 4, under an incident's h3). */
export function markdown(text: string, top = 4): Html {
  return raw(`<div class="markdown">${md.render(text, { top })}</div>`);
}
