// world: any
// Whether an element shows: the browser's own rendering test, and the stricter box test that
// banners and loading markers need.

/**
 * Rendered, by the browser's test (display, visibility, content-visibility).
 * @param {Element} el
 */
const isVisible = (el) => {
  if (typeof el.checkVisibility === 'function') {
    return el.checkVisibility({ checkVisibilityCSS: true });
  }
  return el.getClientRects().length > 0;
};

/**
 * Has a box of some size that is neither hidden nor transparent.
 * @param {Element} el
 */
const hasVisibleBox = (el) => {
  const box = el.getBoundingClientRect();
  if (box.width <= 0 || box.height <= 0) return false;
  const style = getComputedStyle(el);
  return style.visibility !== 'hidden' && style.display !== 'none' && style.opacity !== '0';
};
