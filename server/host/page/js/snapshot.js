// world: isolated
// Walks one document into the snapshot's lines (the main frame's, or a same-origin frame's
// under a frame element of an earlier walk) and keeps its elements in the world's registry,
// where refs resolve. Isolated: a page's patched DOM cannot change what the agent is shown.
// include: lib/roles.js
// include: lib/visible.js
// include: lib/dom.js
// include: lib/world.js
(/**
  * @param {{revision: number, frameKey: string, budget: number, baseDepth: number,
  *   owner: [string, number] | null, keepFrom: number, hideValues?: boolean}} options
  */
(options) => {
  const { revision, frameKey, budget, baseDepth, owner, keepFrom } = options;
  // A tab in secure entry: no field shows what it holds.
  const hideValues = !!options.hideValues;
  const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'svg', 'SVG']);
  const INLINE = new Set(['A', 'SPAN', 'B', 'I', 'EM', 'STRONG', 'SMALL', 'CODE', 'LABEL', 'ABBR',
    'SUB', 'SUP', 'MARK', 'U', 'S', 'TIME', 'Q', 'CITE', 'FONT', 'BR', 'KBD', 'VAR', 'DATA']);
  const CONTAINERS = new Set(['dialog', 'alertdialog', 'navigation', 'main', 'form', 'region',
    'list', 'menu', 'menubar', 'tablist', 'tabpanel', 'table', 'grid', 'tree', 'group', 'radiogroup']);
  const world = toolsWorld();

  let doc = document;
  /** @type {HTMLIFrameElement | null} */
  let frameElement = null;
  if (owner) {
    const parent = registryOf(revision, owner[0]);
    frameElement = parent ? /** @type {HTMLIFrameElement | null} */ (parent.elements[owner[1]]) : null;
    const inner = frameElement ? frameElement.contentDocument : null;
    if (!inner) return null;
    doc = inner;
  } else {
    // A new revision starts with its main frame; revisions before keepFrom are forgotten.
    for (const [old, parts] of world.snapshots) {
      if (old !== revision && old >= keepFrom) continue;
      for (const part of parts.values()) part.observer.disconnect();
      world.snapshots.delete(old);
    }
    world.snapshots.set(revision, new Map());
  }

  /** @type {(Element | null)[]} */
  const elements = [null];
  /** @type {([string, string] | null)[]} */
  const info = [null];
  /** @type {{n: number, line: number, depth: number}[]} */
  const frames = [];
  /** @type {string[]} */
  const lines = [];
  let used = 0;
  let cut = false;
  let block = 0;
  /** @type {{block: number, depth: number, index: number, text: string} | null} */
  let lastText = null;
  const active = deepActive(doc);

  /** @param {string} line */
  const emit = (line) => {
    if (used + line.length + 1 > budget) { cut = true; return false; }
    lines.push(line);
    used += line.length + 1;
    lastText = null;
    return true;
  };

  /**
   * @param {string} text
   * @param {number} depth
   */
  const emitText = (text, depth) => {
    if (lastText && lastText.block === block && lastText.depth === depth) {
      const index = lastText.index;
      const merged = clean(lastText.text + ' ' + text, 200);
      const line = '  '.repeat(depth) + 'text ' + JSON.stringify(merged);
      const delta = line.length - lines[index].length;
      if (used + delta > budget) { cut = true; return; }
      lines[index] = line;
      used += delta;
      lastText.text = merged;
      return;
    }
    const short = clean(text, 200);
    if (emit('  '.repeat(depth) + 'text ' + JSON.stringify(short))) {
      lastText = { block, depth, index: lines.length - 1, text: short };
    }
  };

  /**
   * @param {Element} el
   * @param {string} role
   * @param {string} name
   */
  const register = (el, role, name) => {
    elements.push(el);
    info.push([role, name]);
    return revision + ':' + frameKey + ':' + (elements.length - 1);
  };

  /**
   * @param {Element} el
   * @param {string} role
   */
  const states = (el, role) => {
    /** @type {string[]} */
    const out = [];
    const tag = el.tagName;
    const field = /** @type {HTMLInputElement} */ (el);
    if (role === 'heading') out.push('level=' + (Number(tag.slice(1)) || el.getAttribute('aria-level') || 2));
    if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true') out.push('disabled');
    if ((tag === 'INPUT' || tag === 'TEXTAREA') && field.readOnly) out.push('readonly');
    else if (el.getAttribute('aria-readonly') === 'true') out.push('readonly');
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      const checked = tag === 'INPUT' ? field.checked : el.getAttribute('aria-checked') === 'true';
      out.push(checked ? 'checked' : 'unchecked');
    }
    const expanded = el.getAttribute('aria-expanded');
    if (expanded === 'true') out.push('expanded');
    else if (expanded === 'false') out.push('collapsed');
    if (tag === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS') {
      out.push(/** @type {HTMLDetailsElement} */ (el.parentElement).open ? 'expanded' : 'collapsed');
    }
    if (el.getAttribute('aria-selected') === 'true') out.push('selected');
    if (field.required || el.getAttribute('aria-required') === 'true') out.push('required');
    if ((tag === 'INPUT' || tag === 'TEXTAREA') && field.maxLength >= 0) out.push('maxlength=' + field.maxLength);
    if (el === active) out.push('focused');
    return out.length ? ' [' + out.join(', ') + ']' : '';
  };

  /**
   * @param {Element} el
   * @param {string} role
   */
  const valueOf = (el, role) => {
    const tag = el.tagName;
    const field = /** @type {HTMLInputElement} */ (el);
    if (tag === 'INPUT' && inputType(el) === 'password') return ' [password: value hidden]';
    if (hideValues && (tag === 'INPUT' || tag === 'TEXTAREA' || /** @type {HTMLElement} */ (el).isContentEditable)) {
      return ' [secure entry: value hidden]';
    }
    if (tag === 'INPUT' && (role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'combobox' || role === 'slider')) {
      return field.value ? ' value=' + JSON.stringify(clean(field.value, 100)) : '';
    }
    if (tag === 'TEXTAREA') return field.value ? ' value=' + JSON.stringify(clean(field.value, 100)) : '';
    if (tag === 'SELECT') {
      const select = /** @type {HTMLSelectElement} */ (el);
      const chosen = Array.from(select.selectedOptions).map((o) => clean(o.label, 60)).join(', ');
      const options = Array.from(select.options).slice(0, 10).map((o) => clean(o.label, 40));
      const more = select.options.length > 10 ? ' +' + (select.options.length - 10) + ' more' : '';
      return ' value=' + JSON.stringify(chosen) + ' options=' + JSON.stringify(options.join(' | ') + more);
    }
    if (role === 'textbox' && /** @type {HTMLElement} */ (el).isContentEditable) {
      const text = clean(/** @type {HTMLElement} */ (el).innerText, 100);
      return text ? ' value=' + JSON.stringify(text) : '';
    }
    return '';
  };

  /**
   * @param {Element} parent
   * @param {number} depth
   */
  const walkChildren = (parent, depth) => {
    const root = parent.shadowRoot || parent;
    for (let child = root.firstChild; child && !cut; child = child.nextSibling) walk(child, depth);
  };

  /**
   * @param {Node} node
   * @param {number} depth
   */
  const walk = (node, depth) => {
    if (cut) return;
    if (node.nodeType === Node.TEXT_NODE) {
      const text = /** @type {Text} */ (node).data.replace(/\s+/g, ' ').trim();
      if (text) emitText(text, depth);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = /** @type {Element} */ (node);
    const tag = el.tagName;
    if (SKIP_TAGS.has(tag) || el.getAttribute('aria-hidden') === 'true') return;
    if (tag === 'SLOT') {
      const assigned = /** @type {HTMLSlotElement} */ (el).assignedNodes({ flatten: true });
      if (assigned.length) { for (const n of assigned) walk(n, depth); } else walkChildren(el, depth);
      return;
    }
    if (!isVisible(el)) {
      if (getComputedStyle(el).display === 'contents') walkChildren(el, depth);
      return;
    }
    if (!INLINE.has(tag)) block += 1;
    const role = roleOf(el);
    if (role === 'iframe') {
      const name = nameOf(el, role);
      /** @type {Document | null} */
      let inner = null;
      try { inner = /** @type {HTMLIFrameElement} */ (el).contentDocument; } catch (e) { inner = null; }
      const line = '  '.repeat(depth) + 'iframe' + (name ? ' ' + JSON.stringify(name) : '') +
        (inner ? '' : ' [another site: not included]');
      if (emit(line) && inner) {
        elements.push(el);
        info.push(null);
        frames.push({ n: elements.length - 1, line: lines.length, depth: depth + 1 });
      }
      return;
    }
    if (role !== null && isActionable(role)) {
      const name = nameOf(el, role);
      const ref = register(el, role, name);
      emit('  '.repeat(depth) + ref + ' ' + role + (name ? ' ' + JSON.stringify(name) : '') +
        valueOf(el, role) + states(el, role));
      // A control's content is its name; controls inside it (rare) are still listed.
      if (tag !== 'SELECT' && tag !== 'TEXTAREA' && el.querySelector('a[href],button,input,select,textarea,[role]')) {
        walkChildren(el, depth + 1);
      }
      if (el.shadowRoot && role !== 'textbox') walkChildren(el, depth + 1);
      return;
    }
    if (role === 'heading' || role === 'img') {
      const name = nameOf(el, role);
      if (name) emit('  '.repeat(depth) + role + ' ' + JSON.stringify(name) + states(el, role));
      if (role === 'heading' && el.querySelector('a[href],button,input,select,textarea')) walkChildren(el, depth + 1);
      return;
    }
    if (role !== null && CONTAINERS.has(role)) {
      const name = nameOf(el, role);
      if (name || !['list', 'group', 'table', 'region'].includes(role)) {
        emit('  '.repeat(depth) + role + (name ? ' ' + JSON.stringify(name) : ''));
        walkChildren(el, depth + 1);
        block += 1;
        lastText = null;
        return;
      }
    }
    if (tag === 'LABEL' && /** @type {HTMLLabelElement} */ (el).control) {
      // A label's text is its control's name, which the control's line already shows.
      for (let child = el.firstElementChild; child && !cut; child = child.nextElementSibling) walk(child, depth);
      return;
    }
    walkChildren(el, depth);
    if (!INLINE.has(tag)) block += 1;
  };

  if (doc.body) walk(doc.body, baseDepth);
  const walked = elements.length - 1;
  /** @type {SnapshotRegistry} */
  const registry = {
    elements, info, doc, owner: frameElement, mutations: 0,
    observer: new MutationObserver((records) => { registry.mutations += records.length; }),
  };
  registry.observer.observe(doc, { childList: true, subtree: true });
  const parts = world.snapshots.get(revision);
  const previous = parts ? parts.get(frameKey) : null;
  if (previous) previous.observer.disconnect();
  if (parts) parts.set(frameKey, registry);
  return { lines, frames, cut, refs: walked, title: doc.title, url: doc.URL };
})
