// world: isolated
// The rendered page (or the one element `selector` matches) as Markdown. Headings,
// landmarks, forms and tables carry a `<!-- css: ... -->` line with a selector that
// matches that one element, so the agent can target what it read. Reads only; form fields
// show their labels, never their values; isolated, so the page cannot rewrite what it shows.
// `budget` caps the Markdown's characters (null: no cap of its own) and `room` what the
// Markdown may take written as a JSON string; the block that crosses either is cut, at a
// line or word end near the limit, and `truncated` says so.
(/** @param {{selector: string | null, budget: number | null, room: number}} args */
({selector, budget, room}) => {
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK',
    'SVG', 'CANVAS', 'OBJECT', 'EMBED']);
  const BLOCK = new Set(['ADDRESS', 'ARTICLE', 'ASIDE', 'DETAILS', 'DIALOG', 'DIV', 'DL', 'DD',
    'DT', 'FIELDSET', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM', 'HEADER', 'MAIN', 'NAV', 'P',
    'SECTION', 'SUMMARY', 'CAPTION', 'LEGEND', 'BODY']);
  const LANDMARK = new Set(['MAIN', 'NAV', 'HEADER', 'FOOTER', 'ASIDE', 'SECTION', 'ARTICLE',
    'FORM', 'TABLE', 'DIALOG']);
  const LANDMARK_ROLES = new Set(['main', 'navigation', 'region', 'dialog', 'form', 'search',
    'banner', 'contentinfo', 'complementary']);

  if (selector) {
    /** @type {NodeListOf<Element>} */
    let found;
    try { found = document.querySelectorAll(selector); } catch (e) {
      return {error: 'invalidSelector'};
    }
    if (found.length !== 1) return {error: found.length ? 'ambiguous' : 'notFound', count: found.length};
  }
  const start = selector ? document.querySelector(selector) : document.body;
  if (!start) return {content: '', truncated: false};

  /** @type {string[]} */
  const out = [];
  const most = budget === null ? Infinity : budget;
  let used = 0;  // characters emitted
  let spent = 0;  // ...and their length as JSON, escapes included
  let truncated = false;  // a limit was reached: nothing more is emitted
  // Ends the text of a block that was cut while read for its text (a quote, a block in a
  // link or a cell): what follows it is past the limit. Page text never holds it.
  const CUT = '\u0000';
  // The length of `text` inside a JSON string. Never less than the host's count: JSON here
  // also escapes a lone surrogate and counts a pair as two.
  /** @param {string} text */
  const jsonLength = (text) => JSON.stringify(text).length - 2;
  // The longest start of `text` within `chars` characters and `cost` JSON characters,
  // ended at a line or word end in its last stretch when there is one.
  /**
   * @param {string} text
   * @param {number} chars
   * @param {number} cost
   */
  const head = (text, chars, cost) => {
    let low = 0;
    let high = Math.max(0, Math.min(text.length, chars, cost));
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (jsonLength(text.slice(0, middle)) <= cost) low = middle; else high = middle - 1;
    }
    let end = low;
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end -= 1;  // not inside a pair
    const stretch = Math.min(300, Math.floor(end / 4));
    const line = text.lastIndexOf('\n', end);
    if (line > 0 && line >= end - stretch) return text.slice(0, line);
    for (let i = end; i > 0 && i >= end - stretch; i--) {
      if (/\s/.test(text[i])) return text.slice(0, i);
    }
    return text.slice(0, end);
  };
  /** @param {string} given */
  const emit = (given) => {
    if (truncated) return;
    const at = given.indexOf(CUT);
    const text = at < 0 ? given : given.slice(0, at);
    const chars = most - used;
    const cost = room - spent;
    const whole = text.length <= chars && text.length <= cost ? jsonLength(text) : Infinity;
    const kept = whole <= cost ? text : head(text, chars, cost);
    out.push(kept);
    used += kept.length;
    spent += kept === text ? whole : jsonLength(kept);
    if (kept !== given) truncated = true;
  };

  /** @param {Element} el */
  const hidden = (el) => {
    if (/** @type {HTMLElement} */ (el).hidden || el.getAttribute('aria-hidden') === 'true') return true;
    const style = getComputedStyle(el);
    return style.display === 'none' || style.visibility === 'hidden';
  };
  /** @param {string} text */
  const squash = (text) => text.replace(/\s+/g, ' ').replaceAll(CUT, '');
  /** @param {string} text */
  const esc = (text) => text.replace(/([\\`*_\[\]])/g, '\\$1').replaceAll(CUT, '');

  // A selector that matches `el` alone, from its id or its place under the nearest id.
  /** @param {string} sel */
  const unique = (sel) => { try { return document.querySelectorAll(sel).length === 1; } catch (e) { return false; } };
  /** @param {Element} el */
  const selectorOf = (el) => {
    if (el.getRootNode() !== document) return null;  // inside a shadow root: no document selector
    /** @type {string[]} */
    const parts = [];
    for (let node = /** @type {Element | null} */ (el); node && node.nodeType === 1; node = node.parentElement) {
      if (node.id && unique('#' + CSS.escape(node.id))) {
        parts.unshift('#' + CSS.escape(node.id));
        break;
      }
      const tag = node.tagName.toLowerCase();
      if (tag === 'body' || tag === 'html') { parts.unshift(tag); break; }
      const parent = node.parentElement;
      const tagName = node.tagName;
      const same = parent ? Array.from(parent.children).filter((c) => c.tagName === tagName) : [];
      parts.unshift(same.length > 1 ? `${tag}:nth-of-type(${same.indexOf(node) + 1})` : tag);
    }
    // The shortest tail of the path that still names this element alone.
    for (let k = 1; k <= parts.length; k++) {
      const sel = parts.slice(parts.length - k).join(' > ');
      if (unique(sel) && document.querySelector(sel) === el) return sel;
    }
    return null;
  };
  /** @param {Element} el */
  const annotate = (el) => {
    const sel = selectorOf(el);
    if (sel) emit(`\n<!-- css: ${sel} -->\n`);
  };
  /** @param {Element} el */
  const isLandmark = (el) => LANDMARK.has(el.tagName) ||
    LANDMARK_ROLES.has((el.getAttribute('role') || '').toLowerCase());

  /** @param {Element} el */
  const labelOf = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria) return squash(aria).trim();
    const labels = /** @type {HTMLInputElement} */ (el).labels;
    if (labels && labels.length) return squash(labels[0].innerText || '').trim();
    return squash(el.getAttribute('placeholder') || el.getAttribute('name') || '').trim();
  };
  /**
   * @param {Element} el
   * @returns {Node[]}
   */
  const childrenOf = (el) => {
    if (el.shadowRoot) return Array.from(el.shadowRoot.childNodes);
    if (el.tagName === 'SLOT') {
      const assigned = /** @type {HTMLSlotElement} */ (el).assignedNodes({flatten: true});
      return assigned.length ? assigned : Array.from(el.childNodes);
    }
    return Array.from(el.childNodes);
  };

  /**
   * The text of an inline run, with links, emphasis and code kept.
   * @param {Element} el
   * @returns {string}
   */
  const inline = (el) => {
    let text = '';
    for (const node of childrenOf(el)) {
      if (node.nodeType === 3) { text += esc(squash(node.textContent || '')); continue; }
      if (node.nodeType !== 1) continue;
      const child = /** @type {Element} */ (node);
      if (SKIP.has(child.tagName.toUpperCase()) || hidden(child)) continue;
      text += inlineElement(child);
    }
    return text;
  };
  /**
   * @param {Element} el
   * @returns {string}
   */
  const inlineElement = (el) => {
    const html = /** @type {HTMLElement} */ (el);
    switch (el.tagName) {
      case 'BR': return '\n';
      case 'A': {
        const label = inline(el).trim();
        const href = /** @type {HTMLAnchorElement} */ (el).href || '';
        if (!label) return '';
        return /^https?:/i.test(href) ? `[${label}](${href})` : label;
      }
      case 'IMG': {
        const img = /** @type {HTMLImageElement} */ (el);
        const alt = squash(img.alt || '').trim();
        const src = /^https?:/i.test(img.currentSrc || img.src) ? (img.currentSrc || img.src) : '';
        return alt || src ? `![${esc(alt)}](${src})` : '';
      }
      case 'STRONG': case 'B': { const t = inline(el).trim(); return t ? `**${t}**` : ''; }
      case 'EM': case 'I': { const t = inline(el).trim(); return t ? `*${t}*` : ''; }
      case 'CODE': case 'KBD': case 'SAMP': { const t = squash(el.textContent || '').trim(); return t ? '`' + t + '`' : ''; }
      case 'INPUT': {
        const input = /** @type {HTMLInputElement} */ (el);
        const type = (el.getAttribute('type') || 'text').toLowerCase();
        if (type === 'hidden') return '';
        if (['submit', 'button', 'reset'].includes(type)) return ` [button: ${esc(input.value || type)}] `;
        if (type === 'checkbox' || type === 'radio') return ` [${type}${input.checked ? ' checked' : ''}: ${esc(labelOf(el))}] `;
        return ` [${type === 'password' ? 'password' : 'field'}: ${esc(labelOf(el))}] `;
      }
      case 'TEXTAREA': return ` [text area: ${esc(labelOf(el))}] `;
      case 'SELECT': return ` [choice: ${esc(labelOf(el))}] `;
      case 'BUTTON': { const t = squash(html.innerText || '').trim() || el.getAttribute('aria-label') || ''; return t ? ` [button: ${esc(t)}] ` : ''; }
      case 'IFRAME': return ' [frame] ';
      default: return isBlockish(el) ? '\n' + collected(() => block(el, 0)) + '\n' : inline(el);
    }
  };
  /** @param {Element} el */
  const isBlockish = (el) => BLOCK.has(el.tagName) || /^H[1-6]$/.test(el.tagName) ||
    ['UL', 'OL', 'LI', 'PRE', 'BLOCKQUOTE', 'TABLE', 'HR'].includes(el.tagName);
  // What `write` emits, returned as text instead (a block inside a run, a quote's lines).
  /** @param {() => void} write */
  const collected = (write) => {
    const saved = out.length;
    const [savedUsed, savedSpent, savedTruncated] = [used, spent, truncated];
    write();
    const text = out.splice(saved).join('').trim();
    const cut = truncated && !savedTruncated;
    [used, spent, truncated] = [savedUsed, savedSpent, savedTruncated];
    return cut ? text + CUT : text;
  };

  /** @param {string} text */
  const paragraph = (text) => {
    const t = text.replace(/[ \t]{2,}/g, ' ').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
    if (t) emit('\n' + t + '\n');
  };

  /** @param {Element} el */
  const table = (el) => {
    const rows = Array.from(/** @type {HTMLTableElement} */ (el).rows || []).filter((r) => !hidden(r));
    if (!rows.length) return;
    const cells = rows.map((r) => Array.from(r.cells).map((c) => inline(c).replace(/\|/g, '\\|').replace(/\n/g, ' ').trim()));
    const width = Math.max(...cells.map((r) => r.length));
    /** @param {string[]} r */
    const line = (r) => '| ' + Array.from({length: width}, (_, i) => r[i] || '').join(' | ') + ' |';
    emit('\n' + line(cells[0]) + '\n' + line(Array(width).fill('---')) + '\n');
    for (const r of cells.slice(1)) emit(line(r) + '\n');
  };

  /**
   * @param {Element} el
   * @param {number} depth
   */
  const list = (el, depth) => {
    let n = 1;
    if (depth === 0) emit('\n');
    for (const node of childrenOf(el)) {
      const item = /** @type {Element} */ (node);
      if (node.nodeType !== 1 || item.tagName !== 'LI' || hidden(item)) continue;
      const marker = el.tagName === 'OL' ? `${n++}.` : '-';
      let text = '';
      /** @type {Element[]} */
      const nested = [];
      for (const inner of childrenOf(item)) {
        const child = /** @type {Element} */ (inner);
        if (inner.nodeType === 1 && (child.tagName === 'UL' || child.tagName === 'OL')) nested.push(child);
        else if (inner.nodeType === 3) text += esc(squash(inner.textContent || ''));
        else if (inner.nodeType === 1 && !SKIP.has(child.tagName) && !hidden(child)) text += inlineElement(child);
      }
      emit('  '.repeat(depth) + marker + ' ' + text.replace(/\s*\n\s*/g, ' ').trim() + '\n');
      for (const sub of nested) list(sub, depth + 1);
    }
  };

  /**
   * @param {Element} el
   * @param {number} depth
   */
  const block = (el, depth) => {
    if (truncated) return;
    const tag = el.tagName;
    if (SKIP.has(tag.toUpperCase()) || hidden(el)) return;
    const heading = /^H([1-6])$/.exec(tag);
    if (heading) {
      // A heading that opens a landmark is named by the landmark's own selector.
      const parent = el.parentElement;
      if (!(parent && isLandmark(parent) && parent.firstElementChild === el)) annotate(el);
      const text = inline(el).replace(/\s+/g, ' ').trim();
      if (text) emit('\n' + '#'.repeat(Number(heading[1])) + ' ' + text + '\n');
      return;
    }
    if (isLandmark(el) && el !== document.body) annotate(el);
    switch (tag) {
      case 'TABLE': table(el); return;
      case 'UL': case 'OL': list(el, 0); return;
      case 'PRE': emit('\n```\n' + /** @type {HTMLElement} */ (el).innerText.replace(/\n+$/, '').replaceAll(CUT, '') + '\n```\n'); return;
      case 'HR': emit('\n---\n'); return;
      case 'BLOCKQUOTE': {
        const text = collected(() => flow(el, depth));
        if (text) emit('\n' + text.split('\n').map((l) => '> ' + l).join('\n') + '\n');
        return;
      }
      default: break;
    }
    flow(el, depth);
  };

  /**
   * The children of `el`: inline ones gather into paragraphs, block ones start their own.
   * @param {Element} el
   * @param {number} depth
   */
  const flow = (el, depth) => {
    let run = '';
    for (const node of childrenOf(el)) {
      if (node.nodeType === 3) { run += esc(squash(node.textContent || '')); continue; }
      if (node.nodeType !== 1) continue;
      const child = /** @type {Element} */ (node);
      if (isBlockish(child) || child.shadowRoot) {
        paragraph(run);
        run = '';
        block(child, depth + 1);
      } else if (!SKIP.has(child.tagName.toUpperCase()) && !hidden(child)) {
        run += inlineElement(child);
      }
    }
    paragraph(run);
  };

  block(start, 0);
  const content = out.join('').replace(/\n{3,}/g, '\n\n').trim();
  return {content, truncated};
})
