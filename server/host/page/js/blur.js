// world: isolated
// Takes focus from a picked element, so the page sees its change event, as leaving a field
// does; isolated like the reads around it, so the page's own blur cannot be swapped in.
// include: lib/world.js
(/** @param {string} id */
(id) => {
  const held = picked(id);
  if (held) /** @type {HTMLElement} */ (held.el).blur();
  return !!held;
})
