// world: isolated
// Whether any of the given values shows anywhere in the document after a submit: its title
// and address, every text node, field value and attribute, inside open shadow roots and
// same-origin frames. Answers only true or false, never where or what. Isolated, so the page
// cannot hide an echo from the scan. The value (property and attribute) of the picked fields
// in `masked` is not looked at: they hold a secret on purpose, shown as dots.
// include: lib/world.js
(/** @param {{ values: string[], masked: string[] }} wanted */
({ values, masked }) => {
  const wanted = values.filter((v) => v.length > 0);
  const skipped = new Set(masked.map((id) => picked(id)).map((held) => held && held.el));
  /** @param {number} code */
  const digit = (code) => code >= 48 && code <= 57;
  // A value of digits only (a card's security code, a PIN) shows where no digit touches
  // it: a code 737 is not shown by an order number 97371 or an address's port 34737.
  /** @param {string} text @param {string} v */
  const shows = (text, v) => {
    if (!/^[0-9]+$/.test(v)) return text.includes(v);
    for (let at = text.indexOf(v); at !== -1; at = text.indexOf(v, at + 1)) {
      if (!digit(text.charCodeAt(at - 1)) && !digit(text.charCodeAt(at + v.length))) return true;
    }
    return false;
  };
  /** @param {string | null | undefined} text */
  const has = (text) => !!text && wanted.some((v) => shows(text, v));
  /** @param {Document | ShadowRoot} root */
  const scan = (root) => {
    const walker = (root.ownerDocument || /** @type {Document} */ (root)).createTreeWalker(
      root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeType === Node.TEXT_NODE) {
        if (has(node.nodeValue)) return true;
        continue;
      }
      const el = /** @type {Element} */ (node);
      const own = skipped.has(el);
      for (const attr of Array.from(el.attributes)) {
        if (!(own && attr.name === 'value') && has(attr.value)) return true;
      }
      if (!own && 'value' in el && has(String(/** @type {HTMLInputElement} */ (el).value))) return true;
      if (el.shadowRoot && scan(el.shadowRoot)) return true;
      if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
        let inner = null;
        try {
          inner = /** @type {HTMLIFrameElement} */ (el).contentDocument;
        } catch (_) {
          inner = null;
        }
        if (inner && (has(inner.title) || has(inner.location.href) || scan(inner))) return true;
      }
    }
    return false;
  };
  let address = location.href;
  try {
    address += ' ' + decodeURIComponent(location.href.replace(/\+/g, ' '));
  } catch (_) {
    // A malformed escape: the address as it is is scanned.
  }
  return has(document.title) || has(address) || scan(document);
})
