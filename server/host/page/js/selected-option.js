// world: isolated
// Which option a picked select shows after a choice: `[index, label]`; isolated, so the page
// cannot pretend the choice held.
// include: lib/world.js
(/** @param {string} id */
(id) => {
  const held = picked(id);
  if (!held) return [-1, null];
  const select = /** @type {HTMLSelectElement} */ (held.el);
  const first = select.selectedOptions[0];
  return [select.selectedIndex, first ? first.label : null];
})
