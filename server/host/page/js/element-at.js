// world: isolated
// The element at a viewport point of the main frame, for a point target; isolated, so the
// page cannot answer for the browser.
// include: lib/world.js
(/** @param {[number, number]} point */
([x, y]) => {
  const el = document.elementFromPoint(x, y);
  return el ? pick(el) : null;
})
