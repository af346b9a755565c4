() => {
  /*COMMON*/
  // What a click may change: fields, their values, what is expanded, and how much text shows.
  const all = deepElements(document, []);
  let fields = 0;
  const values = [];
  const NOT_FIELDS = new Set(['hidden', 'submit', 'button', 'reset', 'image']);
  const expanded = [];
  let dialogs = 0;
  for (const el of all) {
    const tag = el.tagName;
    if ((tag === 'INPUT' && !NOT_FIELDS.has(el.type)) || tag === 'TEXTAREA' || tag === 'SELECT') {
      if (isVisible(el)) fields += 1;
      const checked = el.type === 'checkbox' || el.type === 'radio' ? (el.checked ? '1' : '0') : '';
      values.push(el.type === 'password' ? String(el.value.length) : el.value + checked);
    }
    const state = el.getAttribute('aria-expanded');
    if (state !== null) expanded.push(state);
    if (tag === 'DETAILS') expanded.push(el.open ? 'open' : 'shut');
    if ((tag === 'DIALOG' && el.open) || el.getAttribute('role') === 'dialog' || el.getAttribute('role') === 'alertdialog') {
      if (isVisible(el)) dialogs += 1;
    }
  }
  let textLength = document.body ? document.body.innerText.length : 0;
  for (const el of all) if (el.shadowRoot) textLength += (el.shadowRoot.textContent || '').length;
  return {
    url: location.href,
    title: document.title,
    fields,
    values: values.join('\u0001'),
    expanded: expanded.join(','),
    dialogs,
    textLength,
  };
}
