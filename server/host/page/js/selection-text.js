// world: main
// The text a viewer has selected (in the focused field, or on the page), for copy and cut.
// Main world: the person copies what the page shows them, so nothing of a field that shows
// dots (a password, or a field masked by its style), as a browser copies nothing from one.
(() => {
  const el = /** @type {HTMLInputElement | null} */ (document.activeElement);
  if (el && typeof el.selectionStart === 'number' && el.value !== undefined) {
    const dots = getComputedStyle(el).getPropertyValue('-webkit-text-security');
    if (el.type === 'password' || (dots !== '' && dots !== 'none')) return '';
    return el.value.slice(el.selectionStart, el.selectionEnd === null ? undefined : el.selectionEnd);
  }
  return String(getSelection());
})
