// world: isolated
// Reads the main frame for what only a person settles: an account chooser with several
// accounts (which account an OAuth sign-in goes on with), and a payment confirmation
// (a 3-D Secure challenge: its frame or the form that posts to one). Reads, never writes;
// isolated, so a page cannot hide either from the host.
// include: lib/dom.js
// include: lib/visible.js
(() => {
  const roots = deepRoots(document);
  /** @param {string} selector */
  const all = (selector) => roots.flatMap((root) => Array.from(root.querySelectorAll(selector)));

  // Account chooser: a page that asks to choose an account (or an OAuth authorization
  // page) listing two or more distinct accounts, each a visible clickable entry.
  const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
  const CLICKABLE = 'a[href], button, [role="button"], [role="link"], [role="option"], '
    + '[role="menuitem"], li[data-identifier], [data-email], [tabindex]';
  /** @type {Set<string>} */
  const accounts = new Set();
  for (const el of all(CLICKABLE)) {
    if (!isVisible(el)) continue;
    const text = (/** @type {HTMLElement} */ (el).innerText || '')
      + ' ' + (el.getAttribute('data-email') || '') + ' ' + (el.getAttribute('data-identifier') || '');
    for (const found of text.match(EMAIL) || []) accounts.add(found.toLowerCase());
    if (accounts.size > 20) break;
  }
  const heading = [document.title, ...all('h1, h2, [role="heading"]').map(
    (h) => /** @type {HTMLElement} */ (h).innerText || '')].join(' \n ');
  const asksToChoose = /\b(choose|select|pick|switch|use) (an |your |which |another )?account\b/i.test(heading)
    || /\bcontinue as\b/i.test(heading);
  const query = new URLSearchParams(location.search);
  const oauth = query.has('client_id') && (query.has('redirect_uri') || query.has('response_type'));
  const accountChoice = accounts.size >= 2 && (asksToChoose || oauth);

  // 3-D Secure: a visible frame named for it or at an access control server (ACS), or a
  // form carrying the challenge request (creq, or PaReq of version 1).
  const THREE_DS = /3-?d-?s(ecure)?|three-?d-?s|cardinalcommerce|(^|[/._-])acs([/._-]|$)/i;
  const frame = all('iframe, frame').some((el) => {
    const f = /** @type {HTMLIFrameElement} */ (el);
    const names = [f.name, f.id, f.title, f.getAttribute('src') || ''].join(' ');
    return THREE_DS.test(names) && hasVisibleBox(f);
  });
  const form = all('input[name="creq" i], input[name="PaReq" i], input[name="threeDSMethodData" i]')
    .length > 0;
  return { accountChoice, accounts: accounts.size, payment: frame || form };
})
