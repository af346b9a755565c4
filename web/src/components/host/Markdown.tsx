/** Agent text as Markdown: the safe tree of `markdown.ts`, rendered as elements and text only. */

import type { ComponentChildren } from 'preact';
import { parseMarkdown, type Block, type Inline } from '../../markdown';

function inline(nodes: Inline[]): ComponentChildren {
  return nodes.map((node, index) => {
    switch (node.type) {
      case 'text':
        return node.text;
      case 'code':
        return <code key={index}>{node.text}</code>;
      case 'strong':
        return <strong key={index}>{inline(node.children)}</strong>;
      case 'em':
        return <em key={index}>{inline(node.children)}</em>;
      case 'link':
        return (
          <a key={index} href={node.href} target="_blank" rel="noopener noreferrer">
            {inline(node.children)}
          </a>
        );
    }
  });
}

function block(node: Block, index: number): ComponentChildren {
  switch (node.type) {
    case 'paragraph':
      return <p key={index}>{inline(node.children)}</p>;
    case 'heading': {
      const Tag = `h${Math.min(6, node.level + 2)}` as 'h3';
      return <Tag key={index}>{inline(node.children)}</Tag>;
    }
    case 'code':
      return (
        <pre key={index}>
          <code>{node.text}</code>
        </pre>
      );
    case 'quote':
      return <blockquote key={index}>{node.children.map(block)}</blockquote>;
    case 'list': {
      const items = node.items.map((item, i) => <li key={i}>{inline(item)}</li>);
      return node.ordered ? <ol key={index}>{items}</ol> : <ul key={index}>{items}</ul>;
    }
  }
}

export function Markdown({ text }: { text: string }) {
  return <div class="markdown">{parseMarkdown(text).map(block)}</div>;
}
