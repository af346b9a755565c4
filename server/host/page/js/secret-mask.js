// world: isolated
// Masks the fields a card was filled into, for the person who confirms the payment: each
// shows dots where its characters are (the value stays, so the form still submits it), and
// says how many it masked. Isolated, so the page cannot intercept the change.
// include: lib/world.js
(/** @param {string[]} ids */
(ids) => {
  let masked = 0;
  for (const id of ids) {
    const held = picked(id);
    if (!held || !held.el.isConnected) continue;
    const field = /** @type {HTMLInputElement} */ (held.el);
    field.style.setProperty('-webkit-text-security', 'disc', 'important');
    if (getComputedStyle(field).getPropertyValue('-webkit-text-security') === 'disc') masked += 1;
  }
  return masked;
})
