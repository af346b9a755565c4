// world: any
// The loading markers a read waits out: a visible aria-busy region or skeleton/shimmer box.
// include: lib/visible.js
const BUSY_MARKERS = '[aria-busy="true"], [class*="skeleton" i], [class*="shimmer" i]';

/**
 * Whether any of `roots` shows a loading marker.
 * @param {(Document | ShadowRoot)[]} roots
 */
const busy = (roots) => roots.some((root) =>
  Array.from(root.querySelectorAll(BUSY_MARKERS)).some(hasVisibleBox));
