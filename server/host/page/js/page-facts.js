// world: isolated
// Tells the host the document's title and icon address whenever either changes (a
// single-page app retitles itself long after its load), through a binding that exists in
// this world only: the page's own scripts can neither see it nor call it. Installed on every
// new document; reports at most every 100 ms.
(/** @param {string} binding */
(binding) => {
  /** @type {(payload: string) => void} */
  const send = /** @type {any} */ (globalThis)[binding];
  if (typeof send !== 'function') return;
  let last = '';
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const report = () => {
    timer = undefined;
    const link = /** @type {HTMLLinkElement | null} */ (
      document.querySelector('link[rel~="icon" i]')
    );
    const facts = JSON.stringify({
      title: String(document.title || '').slice(0, 500),
      icon: link && link.href ? link.href : '',
    });
    if (facts === last) return;
    last = facts;
    send(facts);
  };
  const soon = () => {
    if (timer === undefined) timer = setTimeout(report, 100);
  };
  new MutationObserver(soon).observe(document, {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
    attributeFilter: ['href', 'rel'],
  });
  document.addEventListener('DOMContentLoaded', soon);
  addEventListener('load', soon);
})
