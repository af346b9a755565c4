// world: isolated
// Facts the safety checks read before anything is done to a picked element, and the same facts
// of the control a click on it would activate (a submit button for the span inside it, a
// label's control) and, when it differs, of the native control the browser activates beneath
// a role the page drew. Reads only; isolated, so a page's patched getters cannot pass off a commit
// button or a password field as something else.
// include: lib/activation.js
// include: lib/roles.js
// include: lib/visible.js
// include: lib/world.js
(/** @param {string} id */
(id) => {
  const held = picked(id);
  if (!held) return null;
  /** @param {Element} el */
  const factsOf = (el) => {
    const TEXT_TYPES = new Set(['', 'text', 'search', 'email', 'tel', 'url', 'number', 'password',
      'date', 'datetime-local', 'month', 'time', 'week']);
    const tag = el.tagName;
    const field = /** @type {HTMLInputElement} */ (el);
    const html = /** @type {HTMLElement} */ (el);
    const type = tag === 'INPUT' ? (field.type || 'text').toLowerCase() : '';
    const role = roleOf(el);
    const form = field.form || (el.closest && el.closest('form')) || null;
    const autocomplete = (el.getAttribute('autocomplete') || '').toLowerCase();
    const ariaChecked = el.getAttribute('aria-checked');
    const box = el.getBoundingClientRect();
    /** @type {string | null} */
    let value = null;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') value = type === 'password' ? null : field.value;
    else if (html.isContentEditable) value = html.innerText;
    const textInput = (tag === 'INPUT' && TEXT_TYPES.has(type)) || tag === 'TEXTAREA';
    let frameDepth = 0;
    for (let w = /** @type {Window | null} */ (el.ownerDocument.defaultView); w && w !== w.parent; w = w.parent) frameDepth += 1;
    return {
      tag,
      type,
      role,
      name: nameOf(el, role || ''),
      text: clean([el.getAttribute('aria-label'), tag === 'INPUT' ? field.value : el.textContent,
        el.getAttribute('title')].filter(Boolean).join(' '), 300),
      connected: el.isConnected,
      visible: isVisible(el) && box.width > 0 && box.height > 0,
      disabled: (el.matches(':disabled') || !!(el.closest && el.closest('[aria-disabled="true"]'))),
      readOnly: ((tag === 'INPUT' || tag === 'TEXTAREA') && field.readOnly) ||
        el.getAttribute('aria-readonly') === 'true',
      password: type === 'password' || autocomplete === 'current-password' || autocomplete === 'new-password',
      autocomplete,
      textInput,
      contentEditable: !textInput && html.isContentEditable,
      select: tag === 'SELECT',
      checkable: type === 'checkbox' || type === 'radio' ||
        ['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role || ''),
      checked: (type === 'checkbox' || type === 'radio') ? field.checked : ariaChecked === 'true',
      maxLength: (tag === 'INPUT' || tag === 'TEXTAREA') ? field.maxLength : -1,
      value,
      valueLength: value === null ? 0 : value.length,
      submitsForm: !!field.form && ((tag === 'BUTTON' && field.type === 'submit') ||
        (tag === 'INPUT' && (type === 'submit' || type === 'image'))),
      inForm: !!form,
      iframe: tag === 'IFRAME' || tag === 'FRAME',
      frameDepth,
      enterSubmits: enterSubmits(el),
    };
  };
  const facts = factsOf(held.el);
  const activated = activationOf(held.el);
  const native = nativeActivationOf(held.el);
  return {
    ...facts,
    activation: activated === held.el ? null : factsOf(activated),
    nativeActivation: native === null || native === held.el || native === activated ? null : factsOf(native),
  };
})
