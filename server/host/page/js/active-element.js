// world: isolated
// The element a key without a target goes to: the focused element through open shadow roots
// and same-origin frames (or, given a picked frame element, the one focused inside that frame);
// a frame element when focus is in a frame of another origin. Isolated, so its facts are the
// page's true ones.
// include: lib/dom.js
// include: lib/world.js
(/** @param {string | null} id */
(id) => {
  if (id === null) {
    const active = deepFocus(document);
    return active && active !== document.body ? pick(active) : null;
  }
  const held = picked(id);
  if (!held) return null;
  const inner = /** @type {HTMLIFrameElement} */ (held.el).contentDocument;
  const active = inner ? deepFocus(inner) : null;
  return pick(active || held.el);
})
