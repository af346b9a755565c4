(selector) => {
  /*COMMON*/
  // Every element matching a CSS selector, in the document and its open shadow roots.
  try {
    document.querySelector(selector);
  } catch (e) {
    return { invalid: true, count: 0, matches: [] };
  }
  const matches = [];
  const search = (root) => {
    for (const el of root.querySelectorAll(selector)) matches.push(el);
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let el = walker.nextNode(); el; el = walker.nextNode()) {
      if (el.shadowRoot) search(el.shadowRoot);
    }
  };
  search(document);
  return { invalid: false, count: matches.length, matches };
}
