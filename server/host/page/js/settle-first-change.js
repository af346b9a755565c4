// world: isolated
// Waits, at most `limit` ms, for a young empty document's first change; true when it came.
// Isolated, like the probe that asked for it.
(/** @param {{limit: number}} args */
({ limit }) => new Promise((resolve) => {
  /** @param {boolean} changed */
  const done = (changed) => { observer.disconnect(); clearTimeout(timer); resolve(changed); };
  const observer = new MutationObserver(() => done(true));
  observer.observe(document, { subtree: true, childList: true, characterData: true });
  const timer = setTimeout(() => done(false), limit);
}))
