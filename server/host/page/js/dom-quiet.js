// world: main
// Waits until the DOM has been quiet for `quiet` ms, at most `limit` ms; true when it was.
// For wait_for's dom-quiet state, a wait on the page's own pace; no safety decision reads it.
(/** @param {[number, number]} args */
([quiet, limit]) => new Promise((resolve) => {
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => { last = performance.now(); });
  const options = { subtree: true, childList: true, attributes: true, characterData: true };
  observer.observe(document, options);
  const tick = () => {
    const now = performance.now();
    if (now - last >= quiet) { observer.disconnect(); resolve(true); return; }
    if (now - start >= limit) { observer.disconnect(); resolve(false); return; }
    setTimeout(tick, 50);
  };
  tick();
}))
