// world: isolated
// Finds one visible button that refuses optional cookies and clicks it; never accepts.
// Isolated, so the page's own scripts cannot change what it sees or which button it clicks.
// include: lib/dom.js
// include: lib/visible.js
(() => {
  /** @type {[string, string][]} */
  const PLATFORM_BUTTONS = [
    ['OneTrust', '#onetrust-reject-all-handler, .ot-pc-refuse-all-handler'],
    ['Cookiebot', '#CybotCookiebotDialogBodyButtonDecline, #CybotCookiebotDialogBodyLevelButtonLevelOptinDeclineAll'],
    ['Didomi', '#didomi-notice-disagree-button, .didomi-continue-without-agreeing'],
    ['Quantcast', '.qc-cmp2-summary-buttons button[mode="secondary"][aria-label*="disagree" i], #qc-cmp2-ui button[aria-label*="reject" i]'],
    ['TrustArc', '#truste-consent-required'],
    ['Usercentrics', '[data-testid="uc-deny-all-button"], #uc-btn-deny-banner'],
    ['CookieYes', '.cky-btn-reject'],
    ['Complianz', '.cmplz-btn.cmplz-deny'],
    ['Osano', '.osano-cm-denyAll'],
    ['Iubenda', '.iubenda-cs-reject-btn'],
    ['Klaro', '.cm-btn-decline, .cn-decline'],
    ['Termly', '[data-tid="banner-decline"]'],
    ['Axeptio', '#axeptio_btn_dismiss'],
    ['CookieFirst', '[data-cookiefirst-action="reject"]'],
    ['Funding Choices', '.fc-cta-do-not-consent'],
    ['Cookie Notice', '#cn-refuse-cookie'],
    ['Shopify', '#shopify-pc__banner__btn-decline'],
  ];
  // Whole labels that refuse optional cookies. Short verbs ("Decline") also close other
  // dialogs, so they count only where the box says "cookie"; the others name what they refuse.
  const SPECIFIC = [
    'reject all', 'reject all cookies', 'reject cookies', 'reject optional cookies',
    'reject non-essential cookies', 'reject additional cookies', 'decline all',
    'decline all cookies', 'decline cookies', 'decline optional cookies', 'deny all',
    'refuse all', 'refuse cookies', 'only necessary', 'only necessary cookies',
    'necessary only', 'necessary cookies only', 'strictly necessary only',
    'use necessary cookies only', 'use only necessary cookies', 'only essential cookies',
    'essential only', 'essential cookies only', 'accept only necessary',
    'accept only necessary cookies', 'accept only essential cookies',
    'allow necessary cookies only', 'allow only necessary cookies',
    'continue without accepting',
    // German
    'alle ablehnen', 'alles ablehnen', 'alle cookies ablehnen', 'cookies ablehnen',
    'optionale cookies ablehnen', 'nur notwendige', 'nur notwendige cookies',
    'nur erforderliche cookies', 'nur essenzielle cookies', 'nur technisch notwendige cookies',
    'nur notwendige cookies akzeptieren', 'nur notwendige cookies zulassen',
    'nur notwendige cookies erlauben', 'weiter ohne einwilligung',
    // French
    'tout refuser', 'refuser tout', 'refuser tous les cookies', 'refuser les cookies',
    'tout rejeter', 'rejeter tout', 'continuer sans accepter',
    'uniquement les cookies nécessaires', 'cookies nécessaires uniquement',
    'accepter uniquement les cookies nécessaires', 'nécessaires uniquement',
    // Spanish
    'rechazar todo', 'rechazar todas', 'rechazar todas las cookies', 'rechazar cookies',
    'solo necesarias', 'sólo necesarias', 'solo las necesarias', 'solo cookies necesarias',
    'aceptar solo las necesarias', 'aceptar solo necesarias', 'continuar sin aceptar',
    // Italian
    'rifiuta tutto', 'rifiuta tutti', 'rifiuta tutti i cookie', 'rifiuta i cookie',
    'solo necessari', 'solo cookie necessari', 'accetta solo i necessari',
    'accetta solo necessari', 'continua senza accettare',
    // Dutch
    'alles weigeren', 'alle weigeren', 'cookies weigeren', 'alles afwijzen',
    'alleen noodzakelijk', 'alleen noodzakelijke cookies', 'alleen functionele cookies',
    'alleen essentiële cookies', 'alleen noodzakelijke cookies accepteren',
  ];
  const GENERIC = [
    'reject', 'decline', 'deny', 'refuse', 'disagree', 'i do not accept', 'do not accept',
    'ablehnen', 'nicht einverstanden', 'refuser', 'je refuse', 'rejeter', 'rechazar',
    'denegar', 'no acepto', 'rifiuta', 'nega', 'non accetto', 'weigeren', 'afwijzen',
    'niet akkoord',
  ];
  const specific = new Set(SPECIFIC);
  const generic = new Set(GENERIC);
  const CANDIDATES = 'button, [role="button"], input[type="button"], input[type="submit"], a';
  const DIALOGS = 'dialog, [role="dialog"], [role="alertdialog"], [aria-modal="true"]';

  const roots = deepRoots(document);
  /** @param {Element} el */
  const usable = (el) => hasVisibleBox(el) && !/** @type {HTMLButtonElement} */ (el).disabled &&
    el.getAttribute('aria-disabled') !== 'true';
  /** @param {Element} el */
  const labelOf = (el) => {
    const html = /** @type {HTMLInputElement} */ (el);
    const raw = el.tagName === 'INPUT' ? html.value : (html.innerText || el.textContent);
    return (raw || el.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim()
      .toLowerCase().replace(/[.!]+$/, '');
  };
  /**
   * The element's ancestors, crossing out of shadow roots through their hosts.
   * @param {Element} el
   * @returns {Generator<HTMLElement>}
   */
  const ancestors = function* (el) {
    let node = el.parentNode;
    while (node) {
      if (node.nodeType === Node.DOCUMENT_FRAGMENT_NODE) { node = /** @type {ShadowRoot} */ (node).host; continue; }
      if (node.nodeType !== Node.ELEMENT_NODE || node === document.body) return;
      yield /** @type {HTMLElement} */ (node);
      node = node.parentNode;
    }
  };
  /** @param {HTMLElement} el */
  const mentionsCookies = (el) => /cookie/i.test(el.innerText || el.textContent || '');
  /** @param {Element} el */
  const isBox = (el) => {
    if (el.matches(DIALOGS)) return true;
    const position = getComputedStyle(el).position;
    return position === 'fixed' || position === 'sticky';
  };
  /**
   * A dialog, a fixed or sticky box, or another container, that says "cookie".
   * @param {Element} el
   */
  const inCookieBox = (el) => {
    for (const node of ancestors(el)) {
      if (mentionsCookies(node) && (isBox(node) || (node.innerText || '').length < 4000)) {
        return true;
      }
    }
    return false;
  };
  /** @param {Element} el */
  const inBox = (el) => {
    for (const node of ancestors(el)) if (isBox(node)) return true;
    return false;
  };

  for (const [platform, selector] of PLATFORM_BUTTONS) {
    for (const root of roots) {
      const button = Array.from(root.querySelectorAll(selector)).find(usable);
      if (button) {
        /** @type {HTMLElement} */ (button).click();
        return {platform, label: labelOf(button)};
      }
    }
  }
  for (const root of roots) {
    for (const el of root.querySelectorAll(CANDIDATES)) {
      const label = labelOf(el);
      if (!specific.has(label) && !generic.has(label)) continue;
      if (!usable(el)) continue;
      const ok = specific.has(label) ? (inBox(el) || inCookieBox(el)) : inCookieBox(el);
      if (ok) {
        /** @type {HTMLElement} */ (el).click();
        return {platform: null, label};
      }
    }
  }
  return null;
})
