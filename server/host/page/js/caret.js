(el, replace) => {
  // Selects the whole value (replace) or puts the caret at its end (append), like Ctrl+A or End.
  if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
    const length = el.value.length;
    try {
      if (replace) el.setSelectionRange(0, length); else el.setSelectionRange(length, length);
    } catch (e) {
      if (replace) el.select();  // email and number inputs have no selection range
    }
    return;
  }
  const range = el.ownerDocument.createRange();
  range.selectNodeContents(el);
  if (!replace) range.collapse(false);
  const selection = el.ownerDocument.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}
