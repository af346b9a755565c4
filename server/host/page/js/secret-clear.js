// world: isolated
// Empties the fields a secret was entered into, after the submit left the document in place,
// and says how many still hold something. Isolated, so the page cannot intercept the reset.
// include: lib/world.js
(/** @param {string[]} ids */
(ids) => {
  let left = 0;
  for (const id of ids) {
    const held = picked(id);
    if (!held || !held.el.isConnected) continue;
    const field = /** @type {HTMLInputElement} */ (held.el);
    field.value = '';
    field.dispatchEvent(new Event('input', { bubbles: true }));
    field.dispatchEvent(new Event('change', { bubbles: true }));
    if (field.value !== '') left += 1;
  }
  return left;
})
