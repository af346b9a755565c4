// world: isolated
// Does a picked element hold focus, through open shadow roots and every frame that holds it?
// Typing stops when it does not; isolated, so the page cannot claim focus it moved away.
// include: lib/dom.js
// include: lib/world.js
(/** @param {string} id */
(id) => {
  const held = picked(id);
  if (!held) return false;
  const doc = held.el.ownerDocument;
  if (deepActive(doc) !== held.el) return false;
  for (let w = /** @type {Window | null} */ (doc.defaultView); w && w !== w.parent; w = w.parent) {
    try {
      if (w.parent.document.activeElement !== w.frameElement) return false;
    } catch (e) {
      break;
    }
  }
  return true;
})
