// world: isolated
// Waits until the loading markers are gone and the DOM has been quiet for `quiet` ms, at most
// `limit` ms; true when it settled. Isolated, so the page cannot disconnect the observer.
// include: lib/dom.js
// include: lib/visible.js
// include: lib/busy.js
(/** @param {{quiet: number, limit: number}} args */
({ quiet, limit }) => new Promise((resolve) => {
  const roots = deepRoots(document);
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => { last = performance.now(); });
  const options = { subtree: true, childList: true, attributes: true, characterData: true };
  roots.forEach((root) => observer.observe(root, options));
  const tick = () => {
    const now = performance.now();
    if (now - last >= quiet && !busy(roots)) { observer.disconnect(); resolve(true); return; }
    if (now - start >= limit) { observer.disconnect(); resolve(false); return; }
    setTimeout(tick, 25);
  };
  tick();
}))
