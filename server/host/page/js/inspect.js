(el) => {
  /*COMMON*/
  // Facts the safety checks read before anything is done to the element. Reads only.
  const tag = el.tagName;
  const type = tag === 'INPUT' ? (el.type || 'text').toLowerCase() : '';
  const role = roleOf(el);
  const form = el.form || (el.closest && el.closest('form')) || null;
  const autocomplete = (el.getAttribute('autocomplete') || '').toLowerCase();
  const ariaChecked = el.getAttribute('aria-checked');
  const box = el.getBoundingClientRect();
  let value = null;
  if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') value = type === 'password' ? null : el.value;
  else if (el.isContentEditable) value = el.innerText;
  const textInput = (tag === 'INPUT' && TEXT_TYPES.has(type)) || tag === 'TEXTAREA';
  let frameDepth = 0;
  for (let w = window; w !== w.parent; w = w.parent) frameDepth += 1;
  return {
    tag,
    type,
    role,
    name: nameOf(el, role || ''),
    text: clean([el.getAttribute('aria-label'), tag === 'INPUT' ? el.value : el.textContent,
      el.getAttribute('title')].filter(Boolean).join(' '), 300),
    connected: el.isConnected,
    visible: isVisible(el) && box.width > 0 && box.height > 0,
    disabled: (el.matches(':disabled') || !!(el.closest && el.closest('[aria-disabled="true"]'))),
    readOnly: ((tag === 'INPUT' || tag === 'TEXTAREA') && el.readOnly) ||
      el.getAttribute('aria-readonly') === 'true',
    password: type === 'password' || autocomplete === 'current-password' || autocomplete === 'new-password',
    autocomplete,
    textInput,
    contentEditable: !textInput && el.isContentEditable,
    select: tag === 'SELECT',
    checkable: type === 'checkbox' || type === 'radio' ||
      ['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role),
    checked: (type === 'checkbox' || type === 'radio') ? el.checked : ariaChecked === 'true',
    maxLength: (tag === 'INPUT' || tag === 'TEXTAREA') ? el.maxLength : -1,
    value,
    valueLength: value === null ? 0 : value.length,
    submitsForm: !!el.form && ((tag === 'BUTTON' && el.type === 'submit') ||
      (tag === 'INPUT' && (type === 'submit' || type === 'image'))),
    inForm: !!form,
    iframe: tag === 'IFRAME' || tag === 'FRAME',
    frameDepth,
  };
}
