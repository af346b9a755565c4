// world: isolated
// Where a submit could send the fields a secret goes into: for each form that holds one of
// them, its method and the address its action resolves to, and those of each of its submit
// buttons that overrides them (formmethod, formaction; an Enter submits with the first),
// read from the attributes as the browser reads them. Isolated, so a page cannot pass off a
// form's method or action; attributes, not properties, since a field named "action" or
// "method" shadows a form's own.
// include: lib/world.js
(/** @param {string[]} fields */
(fields) => {
  const forms = formsOfPicked(fields);
  if (!forms) return null;
  /**
   * @param {HTMLFormElement} form
   * @param {string | null} methodAttr
   * @param {string | null} actionAttr
   */
  const sent = (form, methodAttr, actionAttr) => {
    const method = (methodAttr || '').trim().toLowerCase();
    const doc = form.ownerDocument;
    let action = '';
    try {
      action = new URL((actionAttr || '').trim() || doc.URL, doc.baseURI).href;
    } catch (_) {
      action = '';
    }
    return {
      method: method === 'post' || method === 'dialog' ? method : 'get',
      action,
      declared: methodAttr !== null || actionAttr !== null,
    };
  };
  const found = [];
  for (const form of forms) {
    const methodAttr = form.getAttribute('method');
    const actionAttr = form.getAttribute('action');
    found.push(sent(form, methodAttr, actionAttr));
    for (const el of Array.from(form.elements)) {
      const button = /** @type {HTMLButtonElement | HTMLInputElement} */ (el);
      const submits = ['BUTTON', 'INPUT'].includes(button.tagName) && ['submit', 'image'].includes(button.type);
      if (!submits || !(button.hasAttribute('formmethod') || button.hasAttribute('formaction'))) continue;
      const method = button.getAttribute('formmethod') ?? methodAttr;
      found.push(sent(form, method, button.getAttribute('formaction') ?? actionAttr));
    }
  }
  return found;
})
