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

/** For each position of `text`, the first position at or after it whose character passes `test` (`text.length` when none). */
function nextWhere(text: string, test: (ch: string) => boolean): Int32Array {
  const next = new Int32Array(text.length + 1);
  next[text.length] = text.length;
  for (let i = text.length - 1; i >= 0; i -= 1) next[i] = test(text[i]) ? i : next[i + 1];
  return next;
}

const isSpace = (ch: string) => /\s/.test(ch);

/**
 * For each position inside a run of backticks: where that run ends, and where the code span
 * opened there closes (the next whole run of the same length), or -1.
 */
function backtickRuns(text: string): { runEnd: Int32Array; closer: Int32Array } {
  const runEnd = new Int32Array(text.length);
  const closer = new Int32Array(text.length).fill(-1);
  const nextRunOfLength = new Map<number, number>();
  let end = text.length;
  while (end > 0) {
    if (text[end - 1] !== '`') {
      end -= 1;
      continue;
    }
    let start = end - 1;
    while (start > 0 && text[start - 1] === '`') start -= 1;
    for (let at = start; at < end; at += 1) {
      runEnd[at] = end;
      closer[at] = nextRunOfLength.get(end - at) ?? -1;
    }
    nextRunOfLength.set(end - start, start);
    end = start;
  }
  return { runEnd, closer };
}

/**
 * Inline text: code spans, strong, emphasis and links; the rest stays text.
 *
 * Read in one pass with lookup tables rather than with one regular expression: such an
 * expression retries from every position, so a long line of `[` or `<http://x` took time
 * growing with the square of its length. The matches are the ones this expression finds,
 * leftmost first and in this order at the same position:
 * (`+)([^`]|[^`][\s\S]*?[^`])\1(?!`) | \*\*([^*]+)\*\* | __([^_]+)__ | \*([^*\s][^*]*)\* |
 * _([^_\s][^_]*)_ | \[([^\]]*)\]\(([^()\s]*)\) | <(https?:\/\/[^>\s]+)>
 */
export function parseInline(text: string): Inline[] {
  const length = text.length;
  const nextStar = nextWhere(text, (ch) => ch === '*');
  const nextUnderscore = nextWhere(text, (ch) => ch === '_');
  const nextBracket = nextWhere(text, (ch) => ch === ']');
  const hrefEnd = nextWhere(text, (ch) => ch === '(' || ch === ')' || isSpace(ch));
  const autoEnd = nextWhere(text, (ch) => ch === '>' || isSpace(ch));
  const { runEnd, closer } = backtickRuns(text);

  /** The node that starts at `at`, and where it ends; null when none does. */
  function nodeAt(at: number): { node: Inline; end: number } | null {
    const ch = text[at];
    if (ch === '`') {
      const close = closer[at];
      if (close < 0) return null;
      const code = text.slice(runEnd[at], close);
      return { node: { type: 'code', text: code.trim() ? code.replace(/^ (.*) $/, '$1') : code }, end: close + runEnd[at] - at };
    }
    if (ch === '*' || ch === '_') {
      const next = ch === '*' ? nextStar : nextUnderscore;
      if (text[at + 1] === ch) {
        const close = next[at + 2];
        if (close > at + 2 && close < length && text[close + 1] === ch) return { node: { type: 'strong', children: parseInline(text.slice(at + 2, close)) }, end: close + 2 };
        return null;
      }
      if (at + 1 < length && !isSpace(text[at + 1])) {
        const close = next[at + 1];
        if (close < length) return { node: { type: 'em', children: parseInline(text.slice(at + 1, close)) }, end: close + 1 };
      }
      return null;
    }
    if (ch === '[') {
      const labelEnd = nextBracket[at + 1];
      if (labelEnd >= length || text[labelEnd + 1] !== '(') return null;
      const close = hrefEnd[labelEnd + 2];
      if (close >= length || text[close] !== ')') return null;
      const whole = text.slice(at, close + 1);
      const safe = safeHref(text.slice(labelEnd + 2, close));
      return { node: safe ? { type: 'link', href: safe, children: parseInline(text.slice(at + 1, labelEnd)) } : { type: 'text', text: whole }, end: close + 1 };
    }
    if (ch === '<') {
      const scheme = text.startsWith('https://', at + 1) ? 8 : text.startsWith('http://', at + 1) ? 7 : 0;
      if (!scheme) return null;
      const close = autoEnd[at + 1 + scheme];
      if (close === at + 1 + scheme || close >= length || text[close] !== '>') return null;
      const auto = text.slice(at + 1, close);
      const safe = safeHref(auto);
      return { node: safe ? { type: 'link', href: safe, children: [{ type: 'text', text: auto }] } : { type: 'text', text: text.slice(at, close + 1) }, end: close + 1 };
    }
    return null;
  }

  const out: Inline[] = [];
  let textStart = 0;
  let at = 0;
  while (at < length) {
    const found = nodeAt(at);
    if (!found) {
      at += 1;
      continue;
    }
    if (at > textStart) out.push({ type: 'text', text: text.slice(textStart, at) });
    out.push(found.node);
    at = textStart = found.end;
  }
  if (textStart < length) out.push({ type: 'text', text: text.slice(textStart) });
  return out;
}

const LIST_ITEM_START = /^\s{0,3}(?:([-*+])|(\d{1,9})[.)])\s+/;

/** A list item's line: ordered or not, and its text; null for any other line. */
function listItem(line: string): { ordered: boolean; text: string } | null {
  const start = LIST_ITEM_START.exec(line);
  if (!start) return null;
  const text = line.slice(start[0].length);
  // A line break inside the text (U+2028, U+2029) makes it a paragraph, as it always has.
  if (/[\n\r\u2028\u2029]/.test(text)) return null;
  return { ordered: start[2] !== undefined, text };
}

const HEADING_START = /^\s{0,3}(#{1,6})\s+/;

/** A heading's line: its level and its text without the closing `#`s; null for any other line. */
function heading(line: string): { level: 1 | 2 | 3 | 4 | 5 | 6; text: string } | null {
  const start = HEADING_START.exec(line);
  if (!start) return null;
  let text = line.slice(start[0].length).trimEnd();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end -= 1;
  text = text.slice(0, end).trimEnd();
  if (/[\n\r\u2028\u2029]/.test(text)) return null;
  return { level: start[1].length as 1 | 2 | 3 | 4 | 5 | 6, text };
}

/** How deep quotes nest; `>` past this depth stays as text of the innermost quote. */
const MAX_QUOTE_DEPTH = 8;

/** Blocks of a Markdown text. */
export function parseMarkdown(source: string): Block[] {
  return parseBlocks(source.replace(/\r\n?/g, '\n').split('\n'), 0);
}

/** Blocks of these lines, read inside `depth` quotes. */
function parseBlocks(lines: string[], depth: number): Block[] {
  const quotes = depth < MAX_QUOTE_DEPTH;
  const paragraphEnd = quotes ? /^\s{0,3}(#{1,6}\s|>|```|~~~)/ : /^\s{0,3}(#{1,6}\s|```|~~~)/;
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
    const title = heading(line);
    if (title) {
      blocks.push({ type: 'heading', level: title.level, children: parseInline(title.text) });
      index += 1;
      continue;
    }
    if (quotes && /^\s{0,3}>/.test(line)) {
      const quoted: string[] = [];
      while (index < lines.length && /^\s{0,3}>/.test(lines[index])) quoted.push(lines[index++].replace(/^\s{0,3}>\s?/, ''));
      blocks.push({ type: 'quote', children: parseBlocks(quoted, depth + 1) });
      continue;
    }
    const first = listItem(line);
    if (first) {
      const items: Inline[][] = [];
      let item: ReturnType<typeof listItem>;
      while (index < lines.length && (item = listItem(lines[index])) && item.ordered === first.ordered) {
        items.push(parseInline(item.text));
        index += 1;
      }
      blocks.push({ type: 'list', ordered: first.ordered, items });
      continue;
    }
    // The first line always belongs to the paragraph: a line like "# a\u2028b" is no heading
    // yet looks like one, and would otherwise be read again and again.
    const paragraph = [lines[index++].trim()];
    while (index < lines.length && lines[index].trim() && !listItem(lines[index]) && !paragraphEnd.test(lines[index])) {
      paragraph.push(lines[index++].trim());
    }
    blocks.push({ type: 'paragraph', children: parseInline(paragraph.join('\n')) });
  }
  return blocks;
}
