// world: isolated
// The public facts of a field a secret goes into: how the page labels it, what kind of field
// it is and the origin of the document that holds it. Never its value. Isolated, so a page
// cannot pass off one field or frame as another.
// include: lib/roles.js
// include: lib/visible.js
// include: lib/world.js
(/** @param {string} id */
(id) => {
  const held = picked(id);
  if (!held) return null;
  const el = held.el;
  const field = /** @type {HTMLInputElement} */ (el);
  const tag = el.tagName;
  const type = tag === 'INPUT' ? (field.type || 'text').toLowerCase() : '';
  const box = el.getBoundingClientRect();
  const doc = el.ownerDocument;
  let topOrigin = doc.location.origin;
  try {
    topOrigin = /** @type {Window} */ (doc.defaultView).top?.location.origin || topOrigin;
  } catch (_) {
    topOrigin = '';
  }
  return {
    label: clean(nameOf(el, roleOf(el) || '') || el.getAttribute('placeholder') || el.getAttribute('name') || '', 120),
    type,
    autocomplete: (el.getAttribute('autocomplete') || '').toLowerCase(),
    fillable: (tag === 'INPUT' && !['checkbox', 'radio', 'submit', 'button', 'image', 'file', 'hidden',
      'reset', 'range', 'color'].includes(type)) || tag === 'TEXTAREA',
    visible: isVisible(el) && box.width > 0 && box.height > 0,
    disabled: el.matches(':disabled'),
    readOnly: (tag === 'INPUT' || tag === 'TEXTAREA') && field.readOnly,
    origin: doc.location.origin,
    topOrigin,
    framed: doc.defaultView !== doc.defaultView?.top,
  };
})
