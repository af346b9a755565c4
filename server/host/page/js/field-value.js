// world: isolated
// What a picked field holds now (its value, or a contenteditable's text), read back after
// typing; isolated, so a MISMATCH is the page's real value, not what it claims.
// include: lib/world.js
(/** @param {string} id */
(id) => {
  const held = picked(id);
  if (!held) return null;
  const el = held.el;
  return ('value' in el && el.tagName !== 'BUTTON') ? String(el.value) : /** @type {HTMLElement} */ (el).innerText;
})
