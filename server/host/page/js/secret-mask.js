// world: isolated
// Masks the fields a card was filled into, for the person who confirms the payment: each
// shows dots where its characters are (the value stays, so the form still submits it), and
// says how many it masked. Isolated, so the page cannot intercept the change; and a page
// that takes the dots off (its style or class changed) has them put back before the next
// frame is drawn, for as long as the document lasts.
// include: lib/world.js
(/** @param {string[]} ids */
(ids) => {
  /** @param {HTMLInputElement} field */
  const mask = (field) => {
    const style = field.style;
    if (
      style.getPropertyValue('-webkit-text-security') !== 'disc' ||
      style.getPropertyPriority('-webkit-text-security') !== 'important'
    ) {
      style.setProperty('-webkit-text-security', 'disc', 'important');
    }
  };
  let masked = 0;
  for (const id of ids) {
    const held = picked(id);
    if (!held || !held.el.isConnected) continue;
    const field = /** @type {HTMLInputElement} */ (held.el);
    mask(field);
    new MutationObserver(() => mask(field)).observe(field, {
      attributes: true,
      attributeFilter: ['style', 'class', 'type'],
    });
    if (getComputedStyle(field).getPropertyValue('-webkit-text-security') === 'disc') masked += 1;
  }
  return masked;
})
