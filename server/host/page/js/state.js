// world: isolated
// What a click may change: fields, their values, what is expanded, and how much text shows,
// for the main frame and (under `frame`) the frame of a picked target. Isolated, so a page
// cannot hide a change an action made, nor fake one.
// include: lib/visible.js
// include: lib/dom.js
// include: lib/world.js
(/** @param {string | null} id */
(id) => {
  const NOT_FIELDS = new Set(['hidden', 'submit', 'button', 'reset', 'image']);
  /** @param {Document} doc */
  const stateOf = (doc) => {
    const all = deepElements(doc);
    let fields = 0;
    /** @type {string[]} */
    const values = [];
    /** @type {string[]} */
    const expanded = [];
    let dialogs = 0;
    for (const el of all) {
      const tag = el.tagName;
      const field = /** @type {HTMLInputElement} */ (el);
      if ((tag === 'INPUT' && !NOT_FIELDS.has(field.type)) || tag === 'TEXTAREA' || tag === 'SELECT') {
        if (isVisible(el)) fields += 1;
        const checked = field.type === 'checkbox' || field.type === 'radio' ? (field.checked ? '1' : '0') : '';
        values.push(field.type === 'password' ? String(field.value.length) : field.value + checked);
      }
      const state = el.getAttribute('aria-expanded');
      if (state !== null) expanded.push(state);
      if (tag === 'DETAILS') expanded.push(/** @type {HTMLDetailsElement} */ (el).open ? 'open' : 'shut');
      if ((tag === 'DIALOG' && /** @type {HTMLDialogElement} */ (el).open) || el.getAttribute('role') === 'dialog' || el.getAttribute('role') === 'alertdialog') {
        if (isVisible(el)) dialogs += 1;
      }
    }
    let textLength = doc.body ? doc.body.innerText.length : 0;
    for (const el of all) if (el.shadowRoot) textLength += (el.shadowRoot.textContent || '').length;
    return {
      url: doc.location.href,
      title: doc.title,
      fields,
      values: values.join('\u0001'),
      expanded: expanded.join(','),
      dialogs,
      textLength,
    };
  };
  /** @type {ReturnType<typeof stateOf> & {frame?: ReturnType<typeof stateOf>}} */
  const state = stateOf(document);
  const held = id === null ? null : picked(id);
  // The target's frame as it is now: a frame that loaded another document shows that one.
  const inner = held && held.owner && held.owner.isConnected ? held.owner.contentDocument : null;
  if (inner && inner.location) state.frame = stateOf(inner);
  return state;
})
