// world: isolated
// The control under a person's press, for the steps an agent learns from: its role and
// accessible name (a field's label, never its value). Isolated, so the page cannot dress
// up what is recorded; null for a press outside a control, ``{secret: true}`` on a
// password, one-time-code or card field, which records nothing.
// include: lib/roles.js
(/** @param {[number, number]} point */
([x, y]) => {
  const SECRET_AUTOCOMPLETE = /(^|\s)(current-password|new-password|one-time-code|cc-[a-z-]+)(\s|$)/;
  let el = document.elementFromPoint(x, y);
  while (el && el.shadowRoot) {
    const inner = el.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === el) break;
    el = inner;
  }
  for (let node = el; node; node = node.parentElement) {
    const role = roleOf(node);
    if (!isActionable(role)) continue;
    const autocomplete = (node.getAttribute('autocomplete') || '').toLowerCase();
    if ((node.tagName === 'INPUT' && inputType(node) === 'password') || SECRET_AUTOCOMPLETE.test(autocomplete)) {
      return { secret: true };
    }
    return { role, name: nameOf(node, role) };
  }
  return null;
})
