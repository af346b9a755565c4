// world: main
// Does the page show `wanted` (any case), in its text or its open shadow roots? For wait_for,
// which waits for what the page itself shows; no safety decision reads it.
// include: lib/dom.js
(/** @param {string} wanted */
(wanted) => {
  /** @param {string | null} s */
  const norm = (s) => (s || '').replace(/\s+/g, ' ').toLowerCase();
  const want = norm(wanted).trim();
  if (document.body && norm(document.body.innerText).includes(want)) return true;
  return deepRoots(document).slice(1).some((root) => norm(root.textContent).includes(want));
})
