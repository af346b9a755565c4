// world: isolated
// The option of a picked select that `wanted` names: its value first, then its label (any
// case); isolated, so the option chosen is the one the page really has.
// include: lib/world.js
(/** @param {{id: string, wanted: string}} args */
({ id, wanted }) => {
  const held = picked(id);
  if (!held) return null;
  /** @param {string} s */
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const options = Array.from(/** @type {HTMLSelectElement} */ (held.el).options);
  let index = options.findIndex((o) => o.value === wanted);
  if (index < 0) index = options.findIndex((o) => norm(o.label) === norm(wanted));
  const option = index >= 0 ? options[index] : null;
  const group = option ? option.parentElement : null;
  return {
    index,
    disabled: !!option && (option.disabled || (!!group && group.tagName === 'OPTGROUP' && /** @type {HTMLOptGroupElement} */ (group).disabled)),
    options: options.slice(0, 30).map((o) => o.label + (o.value !== o.label ? ' (' + o.value + ')' : '')),
    more: Math.max(0, options.length - 30),
  };
})
