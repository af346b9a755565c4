// world: any
// Roles and accessible names, as the snapshot shows them and the safety checks read them;
// a helper: the scripts that include it run isolated.
const ACTIONABLE_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'textbox', 'searchbox',
  'combobox', 'listbox', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'option', 'treeitem']);
const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'tab', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'option', 'treeitem', 'checkbox', 'radio', 'switch', 'cell', 'columnheader']);

/**
 * `s` with its whitespace runs made one space, cut to `max` characters with an ellipsis.
 * @param {string | null | undefined} s
 * @param {number} max
 * @returns {string}
 */
const clean = (s, max) => {
  const t = (s || '').replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '\u2026' : t;
};

/** @param {Element} el */
const inputType = (el) => (el.getAttribute('type') || '').toLowerCase();

/**
 * The element's ARIA role: its explicit role, else the one its tag implies.
 * @param {Element} el
 * @returns {string | null}
 */
const roleOf = (el) => {
  const explicit = el.getAttribute('role');
  if (explicit && explicit.trim()) return explicit.trim().split(/\s+/)[0].toLowerCase();
  switch (el.tagName) {
    case 'A': case 'AREA': return el.hasAttribute('href') ? 'link' : null;
    case 'BUTTON': return 'button';
    case 'SUMMARY': return 'button';
    case 'INPUT': {
      const t = inputType(el);
      if (t === 'hidden') return null;
      if (t === 'checkbox') return 'checkbox';
      if (t === 'radio') return 'radio';
      if (t === 'range') return 'slider';
      if (t === 'number') return 'spinbutton';
      if (t === 'search') return 'searchbox';
      if (['submit', 'reset', 'button', 'image', 'file', 'color'].includes(t)) return 'button';
      return el.hasAttribute('list') ? 'combobox' : 'textbox';
    }
    case 'SELECT': {
      const select = /** @type {HTMLSelectElement} */ (el);
      return (select.multiple || select.size > 1) ? 'listbox' : 'combobox';
    }
    case 'TEXTAREA': return 'textbox';
    case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
    case 'IMG': return el.getAttribute('alt') ? 'img' : null;
    case 'DIALOG': return 'dialog';
    case 'NAV': return 'navigation';
    case 'MAIN': return 'main';
    case 'FORM': return 'form';
    case 'IFRAME': case 'FRAME': return 'iframe';
    default: {
      const editable = /** @type {HTMLElement} */ (el).isContentEditable;
      return editable && el.hasAttribute('contenteditable') ? 'textbox' : null;
    }
  }
};

/** @param {string | null} role */
const isActionable = (role) => role !== null && ACTIONABLE_ROLES.has(role);

/**
 * The element's accessible name, as a person would read it, at most 100 characters.
 * @param {Element} el
 * @param {string | null} role
 * @returns {string}
 */
const nameOf = (el, role) => {
  const label = el.getAttribute('aria-label');
  if (label && label.trim()) return clean(label, 100);
  const labelledBy = el.getAttribute('aria-labelledby');
  if (labelledBy) {
    const root = /** @type {Document | ShadowRoot} */ (el.getRootNode());
    const parts = labelledBy.split(/\s+/).map((id) => root.getElementById && root.getElementById(id))
      .filter((node) => !!node).map((node) => /** @type {Element} */ (node).textContent);
    if (parts.length) return clean(parts.join(' '), 100);
  }
  const tag = el.tagName;
  if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
    const field = /** @type {HTMLInputElement} */ (el);
    const t = inputType(el);
    if (tag === 'INPUT' && ['submit', 'reset', 'button'].includes(t)) {
      return clean(field.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : ''), 100);
    }
    if (tag === 'INPUT' && t === 'image') return clean(el.getAttribute('alt') || 'Submit', 100);
    if (field.labels && field.labels.length) {
      return clean(Array.from(field.labels).map((l) => l.textContent).join(' '), 100);
    }
    return clean(el.getAttribute('placeholder') || el.getAttribute('title') || '', 100);
  }
  if (tag === 'IMG') return clean(el.getAttribute('alt'), 100);
  if (tag === 'IFRAME' || tag === 'FRAME') return clean(el.getAttribute('title') || el.getAttribute('name') || '', 100);
  if (role !== null && NAME_FROM_CONTENT.has(role)) {
    let text = clean(el.textContent, 100);
    if (!text) {
      const img = el.querySelector('img[alt]');
      if (img) text = clean(img.getAttribute('alt'), 100);
    }
    return text || clean(el.getAttribute('title'), 100);
  }
  return clean(el.getAttribute('title'), 100);
};
