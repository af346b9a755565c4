/** Agent text as Markdown: no raw HTML ever, and only safe links that open in a new tab. */
import { render } from 'preact';
import { describe, expect, it } from 'vitest';
import { Markdown } from '../src/components/host/Markdown';
import { parseInline, parseMarkdown, safeHref } from '../src/markdown';

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
});
