// world: isolated
// Selects a picked field's whole value (replace) or puts the caret at its end (append), like
// Ctrl+A or End; isolated, so a page's patched selection methods cannot misplace the text.
// include: lib/world.js
(/** @param {{id: string, replace: boolean}} args */
({ id, replace }) => {
  const held = picked(id);
  if (!held) return false;
  const el = held.el;
  if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
    const field = /** @type {HTMLInputElement} */ (el);
    const length = field.value.length;
    try {
      if (replace) field.setSelectionRange(0, length); else field.setSelectionRange(length, length);
    } catch (e) {
      if (replace) field.select();  // email and number inputs have no selection range
    }
    return true;
  }
  const range = el.ownerDocument.createRange();
  range.selectNodeContents(el);
  if (!replace) range.collapse(false);
  const selection = el.ownerDocument.getSelection();
  if (!selection) return false;
  selection.removeAllRanges();
  selection.addRange(range);
  return true;
})
