/**
 * A small Markdown reader for agent text. It builds a tree of a fixed set of nodes
 * (paragraphs, headings, lists, quotes, code, emphasis, links) whose text is always
 * text: rendered through Preact, nothing in it can become markup, so raw HTML in the
 * agent's words shows as the characters it is. A link keeps only an http(s) or mailto
 * address; anything else (javascript:, data:, relative) shows as plain text.
 *
 * Written here rather than taken from a library: a general Markdown library emits an
 * HTML string that would then need a separate sanitizer, and the chat needs only this
 * subset.
 */

export type Inline =
  | { type: 'text'; text: string }
  | { type: 'code'; text: string }
  | { type: 'strong'; children: Inline[] }
  | { type: 'em'; children: Inline[] }
  | { type: 'link'; href: string; children: Inline[] };

export type Block =
  | { type: 'paragraph'; children: Inline[] }
  | { type: 'heading'; level: 1 | 2 | 3 | 4 | 5 | 6; children: Inline[] }
  | { type: 'code'; language: string; text: string }
  | { type: 'quote'; children: Block[] }
  | { type: 'list'; ordered: boolean; items: Inline[][] };

const ALLOWED_SCHEMES = ['https:', 'http:', 'mailto:'];

/** The address to link to, or null when it is not a safe absolute one. */
export function safeHref(raw: string): string | null {
  const trimmed = raw.trim();
  // Control characters and spaces inside a scheme are how filters get fooled.
  if (/[\u0000-\u0020\u007f]/.test(trimmed)) return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  return ALLOWED_SCHEMES.includes(url.protocol) ? url.href : null;
}

const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]*)\]\(([^()\s]*)\)|<(https?:\/\/[^>\s]+)>/;

/** Inline text: code spans, strong, emphasis and links; the rest stays text. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let rest = text;
  while (rest) {
    const match = INLINE.exec(rest);
    if (!match) {
      out.push({ type: 'text', text: rest });
      break;
    }
    if (match.index > 0) out.push({ type: 'text', text: rest.slice(0, match.index) });
    const [whole, , code, strong1, strong2, em1, em2, label, href, auto] = match;
    if (code !== undefined) out.push({ type: 'code', text: code.trim() ? code.replace(/^ (.*) $/, '$1') : code });
    else if (strong1 !== undefined || strong2 !== undefined) out.push({ type: 'strong', children: parseInline(strong1 ?? strong2 ?? '') });
    else if (em1 !== undefined || em2 !== undefined) out.push({ type: 'em', children: parseInline(em1 ?? em2 ?? '') });
    else if (label !== undefined) {
      const safe = safeHref(href ?? '');
      if (safe) out.push({ type: 'link', href: safe, children: parseInline(label) });
      else out.push({ type: 'text', text: whole });
    } else if (auto !== undefined) {
      const safe = safeHref(auto);
      out.push(safe ? { type: 'link', href: safe, children: [{ type: 'text', text: auto }] } : { type: 'text', text: whole });
    }
    rest = rest.slice(match.index + whole.length);
  }
  return out;
}

const LIST_ITEM = /^\s{0,3}(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;

/** Blocks of a Markdown text. */
export function parseMarkdown(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index];
    const fence = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/.exec(line);
    if (fence) {
      const body: string[] = [];
      index += 1;
      while (index < lines.length && !lines[index].trimStart().startsWith(fence[1])) body.push(lines[index++]);
      index += 1;
      blocks.push({ type: 'code', language: fence[2], text: body.join('\n') });
      continue;
    }
    if (!line.trim()) {
      index += 1;
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      blocks.push({ type: 'heading', level: heading[1].length as 1 | 2 | 3 | 4 | 5 | 6, children: parseInline(heading[2]) });
      index += 1;
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      const quoted: string[] = [];
      while (index < lines.length && /^\s{0,3}>/.test(lines[index])) quoted.push(lines[index++].replace(/^\s{0,3}>\s?/, ''));
      blocks.push({ type: 'quote', children: parseMarkdown(quoted.join('\n')) });
      continue;
    }
    const first = LIST_ITEM.exec(line);
    if (first) {
      const ordered = first[2] !== undefined;
      const items: Inline[][] = [];
      let item: RegExpExecArray | null;
      while (index < lines.length && (item = LIST_ITEM.exec(lines[index])) && (item[2] !== undefined) === ordered) {
        items.push(parseInline(item[3]));
        index += 1;
      }
      blocks.push({ type: 'list', ordered, items });
      continue;
    }
    const paragraph: string[] = [];
    while (index < lines.length && lines[index].trim() && !LIST_ITEM.test(lines[index]) && !/^\s{0,3}(#{1,6}\s|>|```|~~~)/.test(lines[index])) {
      paragraph.push(lines[index++].trim());
    }
    blocks.push({ type: 'paragraph', children: parseInline(paragraph.join('\n')) });
  }
  return blocks;
}
