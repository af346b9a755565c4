// world: main
// The text a viewer has selected (in the focused field, or on the page), for copy and cut.
// Main world: the person copies what the page shows them.
(() => {
  const el = /** @type {HTMLInputElement | null} */ (document.activeElement);
  if (el && typeof el.selectionStart === 'number' && el.value !== undefined) {
    return el.value.slice(el.selectionStart, el.selectionEnd === null ? undefined : el.selectionEnd);
  }
  return String(getSelection());
})
