// world: any
// Walks a document into its open shadow roots and same-origin frames, and finds the focused
// element through them: the one copy of these walks every script includes.

/**
 * Calls `visit` for every element under `root` in tree order, a host's shadow tree right
 * after the host.
 * @param {Node} root
 * @param {(el: Element) => void} visit
 */
const walkDeep = (root, visit) => {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = /** @type {Element} */ (node);
    visit(el);
    if (el.shadowRoot) walkDeep(el.shadowRoot, visit);
  }
};

/**
 * Every element of `root` and of the open shadow roots inside it, in tree order.
 * @param {Document | ShadowRoot} root
 * @returns {Element[]}
 */
const deepElements = (root) => {
  /** @type {Element[]} */
  const out = [];
  walkDeep(root, (el) => { out.push(el); });
  return out;
};

/**
 * `root` and every open shadow root inside it.
 * @param {Document | ShadowRoot} root
 * @returns {(Document | ShadowRoot)[]}
 */
const deepRoots = (root) => {
  const roots = [root];
  walkDeep(root, (el) => { if (el.shadowRoot) roots.push(el.shadowRoot); });
  return roots;
};

/**
 * Every element matching `selector` in `root` and its open shadow roots, `root`'s own first.
 * @param {Document | ShadowRoot} root
 * @param {string} selector
 * @returns {Element[]}
 */
const deepQuery = (root, selector) =>
  deepRoots(root).flatMap((r) => Array.from(r.querySelectorAll(selector)));

/**
 * `doc` and the documents of the frames inside it that this world may read (same origin),
 * at any depth.
 * @param {Document} doc
 * @returns {Document[]}
 */
const frameDocuments = (doc) => {
  const docs = [doc];
  for (const owner of deepQuery(doc, 'iframe, frame')) {
    const inner = /** @type {HTMLIFrameElement} */ (owner).contentDocument;
    if (inner) docs.push(...frameDocuments(inner));
  }
  return docs;
};

/**
 * The element that has focus in `doc`, through open shadow roots.
 * @param {Document} doc
 * @returns {Element | null}
 */
const deepActive = (doc) => {
  let active = doc.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) {
    active = active.shadowRoot.activeElement;
  }
  return active;
};

/**
 * The element that has focus under `doc`, through open shadow roots and the same-origin
 * frames focus is in: the innermost element a key goes to. A frame element when focus is in
 * a frame this world cannot read (another origin).
 * @param {Document} doc
 * @returns {Element | null}
 */
const deepFocus = (doc) => {
  let active = deepActive(doc);
  while (active && (active.tagName === 'IFRAME' || active.tagName === 'FRAME')) {
    const inner = /** @type {HTMLIFrameElement} */ (active).contentDocument;
    const next = inner ? deepActive(inner) : null;
    if (!next) break;
    active = next;
  }
  return active;
};

/**
 * The frame elements that hold `el`, outermost first: empty for an element of this frame's
 * own document, null when a frame between is gone.
 * @param {Element} el
 * @returns {Element[] | null}
 */
const ownerFrames = (el) => {
  /** @type {Element[]} */
  const owners = [];
  for (let doc = el.ownerDocument; doc !== document;) {
    const owner = doc.defaultView && doc.defaultView.frameElement;
    if (!owner) return null;
    owners.unshift(owner);
    doc = owner.ownerDocument;
  }
  return owners;
};
