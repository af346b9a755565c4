// world: isolated
// The element that has focus (through open shadow roots), which a key without a target goes
// to; isolated, so its facts are the page's true ones.
// include: lib/dom.js
// include: lib/world.js
(() => {
  const active = deepActive(document);
  return active && active !== document.body ? pick(active) : null;
})
