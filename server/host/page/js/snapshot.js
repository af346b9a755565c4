(options) => {
  /*COMMON*/
  const { revision, frameKey, budget, baseDepth } = options;
  const INLINE = new Set(['A', 'SPAN', 'B', 'I', 'EM', 'STRONG', 'SMALL', 'CODE', 'LABEL', 'ABBR',
    'SUB', 'SUP', 'MARK', 'U', 'S', 'TIME', 'Q', 'CITE', 'FONT', 'BR', 'KBD', 'VAR', 'DATA']);
  const CONTAINERS = new Set(['dialog', 'alertdialog', 'navigation', 'main', 'form', 'region',
    'list', 'menu', 'menubar', 'tablist', 'tabpanel', 'table', 'grid', 'tree', 'group', 'radiogroup']);
  const elements = [null];
  const info = [null];
  const frames = [];
  const lines = [];
  let used = 0;
  let cut = false;
  let block = 0;
  let lastText = null;
  const active = deepActive();

  const emit = (line) => {
    if (used + line.length + 1 > budget) { cut = true; return false; }
    lines.push(line);
    used += line.length + 1;
    lastText = null;
    return true;
  };

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

  const register = (el, role, name) => {
    elements.push(el);
    info.push([role, name]);
    return revision + ':' + frameKey + ':' + (elements.length - 1);
  };

  const states = (el, role) => {
    const out = [];
    const tag = el.tagName;
    if (role === 'heading') out.push('level=' + (Number(tag.slice(1)) || el.getAttribute('aria-level') || 2));
    if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true') out.push('disabled');
    if ((tag === 'INPUT' || tag === 'TEXTAREA') && el.readOnly) out.push('readonly');
    else if (el.getAttribute('aria-readonly') === 'true') out.push('readonly');
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      const checked = tag === 'INPUT' ? el.checked : el.getAttribute('aria-checked') === 'true';
      out.push(checked ? 'checked' : 'unchecked');
    }
    const expanded = el.getAttribute('aria-expanded');
    if (expanded === 'true') out.push('expanded');
    else if (expanded === 'false') out.push('collapsed');
    if (tag === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS') {
      out.push(el.parentElement.open ? 'expanded' : 'collapsed');
    }
    if (el.getAttribute('aria-selected') === 'true') out.push('selected');
    if (el.required || el.getAttribute('aria-required') === 'true') out.push('required');
    if ((tag === 'INPUT' || tag === 'TEXTAREA') && el.maxLength >= 0) out.push('maxlength=' + el.maxLength);
    if (el === active) out.push('focused');
    return out.length ? ' [' + out.join(', ') + ']' : '';
  };

  const valueOf = (el, role) => {
    const tag = el.tagName;
    if (tag === 'INPUT' && inputType(el) === 'password') return ' [password: value hidden]';
    if (tag === 'INPUT' && (role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'combobox' || role === 'slider')) {
      return el.value ? ' value=' + JSON.stringify(clean(el.value, 100)) : '';
    }
    if (tag === 'TEXTAREA') return el.value ? ' value=' + JSON.stringify(clean(el.value, 100)) : '';
    if (tag === 'SELECT') {
      const chosen = Array.from(el.selectedOptions).map((o) => clean(o.label, 60)).join(', ');
      const options = Array.from(el.options).slice(0, 10).map((o) => clean(o.label, 40));
      const more = el.options.length > 10 ? ' +' + (el.options.length - 10) + ' more' : '';
      return ' value=' + JSON.stringify(chosen) + ' options=' + JSON.stringify(options.join(' | ') + more);
    }
    if (role === 'textbox' && el.isContentEditable) {
      const text = clean(el.innerText, 100);
      return text ? ' value=' + JSON.stringify(text) : '';
    }
    return '';
  };

  const walkChildren = (parent, depth) => {
    const root = parent.shadowRoot || parent;
    for (let child = root.firstChild; child && !cut; child = child.nextSibling) walk(child, depth);
  };

  const walk = (node, depth) => {
    if (cut) return;
    if (node.nodeType === Node.TEXT_NODE) {
      const text = node.data.replace(/\s+/g, ' ').trim();
      if (text) emitText(text, depth);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    const tag = el.tagName;
    if (SKIP_TAGS.has(tag) || el.getAttribute('aria-hidden') === 'true') return;
    if (tag === 'SLOT') {
      const assigned = el.assignedNodes({ flatten: true });
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
      let doc = null;
      try { doc = el.contentDocument; } catch (e) { doc = null; }
      const line = '  '.repeat(depth) + 'iframe' + (name ? ' ' + JSON.stringify(name) : '') +
        (doc ? '' : ' [another site: not included]');
      if (emit(line) && doc) {
        elements.push(el);
        info.push(null);
        frames.push({ n: elements.length - 1, line: lines.length, depth: depth + 1 });
      }
      return;
    }
    if (isActionable(role)) {
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
    if (tag === 'LABEL' && el.control) {
      // A label's text is its control's name, which the control's line already shows.
      for (let child = el.firstElementChild; child && !cut; child = child.nextElementSibling) walk(child, depth);
      return;
    }
    walkChildren(el, depth);
    if (!INLINE.has(tag)) block += 1;
  };

  if (document.body) walk(document.body, baseDepth);
  const walked = elements.length - 1;
  let mutations = 0;
  const observer = new MutationObserver((records) => { mutations += records.length; });
  observer.observe(document, { childList: true, subtree: true });
  return {
    elements,
    info,
    doc: document,
    observer,
    mutations: () => mutations,
    result: { lines, frames, cut, refs: walked, title: document.title, url: location.href },
  };
}
