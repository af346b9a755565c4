// world: isolated
// What a click or a key really sets off, as the browser decides it, so that the refusals judge
// the control a person would be pressing and not the span, icon or label the agent aimed at.

// Roles a page gives to an element that acts like a native control when clicked.
const ACTIVATING_ROLES = new Set(['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
  'option', 'tab', 'switch', 'checkbox', 'radio', 'treeitem']);
// Input types that are buttons: Enter or Space on them, or a click, presses them.
const BUTTON_INPUTS = new Set(['submit', 'image', 'reset', 'button']);
// Input types Chromium treats as text fields: Enter in one submits by the implicit-submission rule.
const TEXT_FIELD_INPUTS = new Set(['', 'text', 'search', 'url', 'tel', 'email', 'password', 'number']);
// Input types on which Enter does nothing to the form.
const NO_SUBMIT_INPUTS = new Set(['color', 'file', 'hidden']);

/**
 * The parent an event on `node` bubbles to: its slot when slotted, the host at a shadow root.
 * @param {Element} node
 * @returns {Element | null}
 */
const eventParent = (node) => {
  if (node.assignedSlot) return node.assignedSlot;
  if (node.parentElement) return node.parentElement;
  const root = node.parentNode;
  return root instanceof ShadowRoot ? root.host : null;
};

/**
 * What `node` itself activates by the browser's own behaviour: the node when it is a button,
 * input, select, textarea, summary or a link with an address, a label's control (null when
 * it has none), undefined when it has no such behaviour.
 * @param {Element} node
 * @returns {Element | null | undefined}
 */
const ownActivation = (node) => {
  const tag = node.tagName;
  if (tag === 'BUTTON' || tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' ||
    tag === 'SUMMARY') return node;
  if ((tag === 'A' || tag === 'AREA') && node.hasAttribute('href')) return node;
  if (tag === 'LABEL') return /** @type {HTMLLabelElement} */ (node).control;
  return undefined;
};

/**
 * The control a click on `el` activates: the closest activatable element on the event's path
 * (a button, a link, an input, a summary, an element with a control's role or an onclick
 * attribute), or a label's control; `el` itself when there is none.
 * @param {Element} el
 * @returns {Element}
 */
const activationOf = (el) => {
  for (let node = /** @type {Element | null} */ (el); node; node = eventParent(node)) {
    const own = ownActivation(node);
    if (own !== undefined) return own || node;
    const role = (node.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (ACTIVATING_ROLES.has(role) || node.hasAttribute('onclick')) return node;
  }
  return el;
};

/**
 * The element whose own activation behaviour a click on `el` sets off, as the browser
 * decides it (a role or an onclick attribute changes nothing there); null when there is
 * none. A `span` with a checkbox's role inside a submit button still submits the form.
 * @param {Element} el
 * @returns {Element | null}
 */
const nativeActivationOf = (el) => {
  for (let node = /** @type {Element | null} */ (el); node; node = eventParent(node)) {
    const own = ownActivation(node);
    if (own !== undefined) return own;
  }
  return null;
};

/**
 * Whether `control` is a submit button of its form.
 * @param {Element} control
 */
const isSubmitButton = (control) => {
  const tag = control.tagName;
  const type = /** @type {HTMLInputElement} */ (control).type;
  return (tag === 'BUTTON' && type === 'submit') || (tag === 'INPUT' && (type === 'submit' || type === 'image'));
};

/**
 * Whether Enter in `el` submits its form, by the rules Chromium follows: in a text field, the
 * form's first submit button is pressed when it is enabled, and without one the form is
 * submitted when this is its only text field; in a checkbox, radio button, range, date or
 * other non-text input, only the enabled first submit button is pressed.
 * @param {Element} el
 */
const enterSubmits = (el) => {
  if (el.tagName !== 'INPUT') return false;
  const field = /** @type {HTMLInputElement} */ (el);
  const type = (field.type || '').toLowerCase();
  const form = field.form;
  if (!form || BUTTON_INPUTS.has(type) || NO_SUBMIT_INPUTS.has(type)) return false;
  let textFields = 0;
  for (const control of Array.from(form.elements)) {
    if (isSubmitButton(control)) return !control.matches(':disabled');
    const other = /** @type {HTMLInputElement} */ (control);
    if (control.tagName === 'INPUT' && TEXT_FIELD_INPUTS.has((other.type || '').toLowerCase())) textFields += 1;
  }
  return TEXT_FIELD_INPUTS.has(type) && textFields === 1;
};
