// world: isolated
// Puts focus in a picked field (through the frames that hold it) with its text selected, so
// the secret typed next replaces it; answers whether the field holds focus. Isolated, so the
// page cannot claim a focus it moved elsewhere.
// include: lib/dom.js
// include: lib/world.js
(/** @param {string} id */
(id) => {
  const held = picked(id);
  if (!held || !held.el.isConnected) return false;
  const field = /** @type {HTMLInputElement} */ (held.el);
  field.scrollIntoView({ block: 'center', inline: 'nearest' });
  field.focus({ preventScroll: true });
  if (typeof field.select === 'function') field.select();
  const doc = field.ownerDocument;
  if (deepActive(doc) !== field) return false;
  for (let w = /** @type {Window | null} */ (doc.defaultView); w && w !== w.parent; w = w.parent) {
    try {
      if (w.parent.document.activeElement !== w.frameElement) return false;
    } catch (e) {
      break;
    }
  }
  return true;
})
