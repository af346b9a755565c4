/** Agent text as Markdown: no raw HTML ever, and only safe links that open in a new tab. */
import { render } from 'preact';
import { describe, expect, it } from 'vitest';
import { Markdown } from '../src/components/host/Markdown';
import { parseInline, parseMarkdown, safeHref, type Block, type Inline } from '../src/markdown';

function html(text: string): HTMLElement {
  const root = document.createElement('div');
  render(<Markdown text={text} />, root);
  return root;
}

describe('markdown', () => {
  it('keeps only http(s) and mailto links', () => {
    expect(safeHref('https://example.com/a?b=1')).toBe('https://example.com/a?b=1');
    expect(safeHref('mailto:a@example.com')).toBe('mailto:a@example.com');
    for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'java\tscript:alert(1)', 'data:text/html,<b>x</b>', '/relative', 'vbscript:x', ' javascript:x']) {
      expect(safeHref(bad), bad).toBeNull();
    }
    expect(parseInline('[x](javascript:alert(1))')).toEqual([{ type: 'text', text: '[x](javascript:alert(1))' }]);
  });

  it('shows raw HTML as text, never as elements', () => {
    const root = html('Hi <img src=x onerror="alert(1)"> and <script>alert(2)</script>\n\n<b>bold?</b>');
    expect(root.querySelector('img, script, b')).toBeNull();
    expect(root.textContent).toContain('<img src=x onerror="alert(1)">');
    expect(root.textContent).toContain('<script>alert(2)</script>');
  });

  it('renders links in a new tab with noopener', () => {
    const link = html('See [the shop](https://shop.example/) or <https://b.example/x>').querySelectorAll('a');
    expect(link).toHaveLength(2);
    expect(link[0].getAttribute('href')).toBe('https://shop.example/');
    expect(link[0].target).toBe('_blank');
    expect(link[0].rel).toContain('noopener');
    expect(link[1].getAttribute('href')).toBe('https://b.example/x');
  });

  it('reads headings, lists, quotes, code and emphasis', () => {
    expect(parseMarkdown('# Title\n\n- a\n- **b**\n\n1. one\n\n> quoted\n\n```js\n<x>\n```\n\n*em* and `co<de>`').map((b) => b.type)).toEqual(['heading', 'list', 'list', 'quote', 'code', 'paragraph']);
    const root = html('```\n<script>x</script>\n```\n\n**strong** *em* `code`');
    expect(root.querySelector('pre code')?.textContent).toBe('<script>x</script>');
    expect(root.querySelector('strong')?.textContent).toBe('strong');
    expect(root.querySelector('em')?.textContent).toBe('em');
    expect(root.querySelector('script')).toBeNull();
  });

  it('reads nested quotes', () => {
    expect(parseMarkdown('> > a\n> b')).toEqual([
      {
        type: 'quote',
        children: [
          { type: 'quote', children: [{ type: 'paragraph', children: [{ type: 'text', text: 'a' }] }] },
          { type: 'paragraph', children: [{ type: 'text', text: 'b' }] },
        ],
      },
    ]);
    expect(html('> > a').querySelector('blockquote > blockquote > p')?.textContent).toBe('a');
  });

  it('nests quotes eight deep and keeps deeper markers as text', () => {
    let blocks = parseMarkdown('>'.repeat(10000) + ' deep');
    for (let depth = 0; depth < 8; depth += 1) {
      expect(blocks).toHaveLength(1);
      blocks = (blocks[0] as Extract<Block, { type: 'quote' }>).children;
    }
    expect(blocks).toEqual([{ type: 'paragraph', children: [{ type: 'text', text: '>'.repeat(9992) + ' deep' }] }]);
    expect(parseMarkdown('>'.repeat(10000))).toHaveLength(1);
    const root = html('Here you go\n\n' + '>'.repeat(6000));
    expect(root.querySelectorAll('blockquote')).toHaveLength(8);
    expect(root.textContent).toContain('Here you go');
  });

  it('reads a line that looks like a heading but is none', () => {
    expect(parseMarkdown('# a\u2028b\nc')).toEqual([{ type: 'paragraph', children: [{ type: 'text', text: '# a\u2028b\nc' }] }]);
    expect(parseMarkdown('# Title ##  ')).toEqual([{ type: 'heading', level: 1, children: [{ type: 'text', text: 'Title' }] }]);
  });

  it('reads long runs of markers as the text they are', () => {
    for (const text of ['['.repeat(200000), '<http://x'.repeat(20000)]) {
      expect(html(text).textContent).toBe(text);
    }
    expect(parseMarkdown('# a' + ' '.repeat(3000) + 'x')).toEqual([
      { type: 'heading', level: 1, children: [{ type: 'text', text: 'a' + ' '.repeat(3000) + 'x' }] },
    ]);
  });

  it('reads inline text as the single expression it replaced did', () => {
    const pieces = ['*', '**', '_', '__', '`', '``', '[', ']', '(', ')', '<', '>', 'http://', 'https://', 'a', ' ', '\n', 'x.y', 'mailto:a@b'];
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    for (let round = 0; round < 20000; round += 1) {
      let text = '';
      for (let count = 1 + next(12); count > 0; count -= 1) text += pieces[next(pieces.length)];
      expect(parseInline(text), text).toEqual(expressionInline(text));
    }
  });
});

/** The reading `parseInline` had before it became one pass: one expression, tried again at each match. */
const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]*)\]\(([^()\s]*)\)|<(https?:\/\/[^>\s]+)>/;

function expressionInline(text: string): Inline[] {
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
    else if (strong1 !== undefined || strong2 !== undefined) out.push({ type: 'strong', children: expressionInline(strong1 ?? strong2 ?? '') });
    else if (em1 !== undefined || em2 !== undefined) out.push({ type: 'em', children: expressionInline(em1 ?? em2 ?? '') });
    else if (label !== undefined) {
      const safe = safeHref(href ?? '');
      out.push(safe ? { type: 'link', href: safe, children: expressionInline(label) } : { type: 'text', text: whole });
    } else if (auto !== undefined) {
      const safe = safeHref(auto);
      out.push(safe ? { type: 'link', href: safe, children: [{ type: 'text', text: auto }] } : { type: 'text', text: whole });
    }
    rest = rest.slice(match.index + whole.length);
  }
  return out;
}
