// world: isolated
// Every element matching a CSS selector, in the document, its open shadow roots and its
// same-origin frames; isolated, so the page cannot hide or add matches.
// include: lib/dom.js
// include: lib/world.js
(/** @param {string} selector */
(selector) => {
  try {
    document.querySelector(selector);
  } catch (e) {
    return { invalid: true, count: 0, pick: null };
  }
  const matches = frameDocuments(document).flatMap((doc) => deepQuery(doc, selector));
  return { invalid: false, count: matches.length, pick: matches.length === 1 ? pick(matches[0]) : null };
})
