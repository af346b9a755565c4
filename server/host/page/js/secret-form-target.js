// world: isolated
// Keeps the submit of each form that holds one of the fields in this tab. A form (or a
// submit button of it, or the document's <base>) aimed at another window opens a popup,
// whose request is no request of the protected tab's: its address, a GET form's with the
// secret in it, would leave the browser unseen and become another tab's. Such a target
// becomes "_self". One naming a frame of this document stays: that frame is the tab's.
// Answers how many targets were changed, or null when a field went away.
// include: lib/world.js
(/** @param {string[]} fields */
(fields) => {
  const forms = formsOfPicked(fields);
  if (!forms) return null;
  /**
   * @param {Document} doc
   * @param {string | null} target
   */
  const opensWindow = (doc, target) => {
    if (target === null) return false;
    const name = target.trim();
    if (['', '_self', '_top', '_parent'].includes(name.toLowerCase())) return false;
    const frames = Array.from(doc.querySelectorAll('iframe[name], frame[name]'));
    return !frames.some((frame) => frame.getAttribute('name') === name);
  };
  let changed = 0;
  for (const form of forms) {
    const doc = form.ownerDocument;
    const base = doc.querySelector('base[target]');
    const own = form.getAttribute('target') ?? (base ? base.getAttribute('target') : null);
    if (opensWindow(doc, own)) {
      form.setAttribute('target', '_self');
      changed += 1;
    }
    for (const el of Array.from(form.elements)) {
      if (el.hasAttribute('formtarget') && opensWindow(doc, el.getAttribute('formtarget'))) {
        el.setAttribute('formtarget', '_self');
        changed += 1;
      }
    }
  }
  return changed;
})
