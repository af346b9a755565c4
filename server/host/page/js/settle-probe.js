// world: isolated
// The first look of a settle wait: is the page showing loading markers, or young and still
// empty? Isolated, so a page cannot stall or skip the agent's wait.
// include: lib/dom.js
// include: lib/visible.js
// include: lib/busy.js
(() => {
  const roots = deepRoots(document);
  const CONTROLS = 'a[href], button, input:not([type="hidden"]), select, textarea, '
    + '[role="button"], [role="link"], [contenteditable=""], [contenteditable="true"]';
  const nav = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType('navigation')[0]);
  return {
    document: performance.timeOrigin,
    age: performance.now(),
    loaded: document.readyState === 'complete',
    loadEnd: nav ? nav.loadEventEnd : 0,
    busy: busy(roots),
    scripted: document.scripts.length > 0,
    controls: roots.some((root) =>
      Array.from(root.querySelectorAll(CONTROLS)).some(hasVisibleBox)),
  };
})
