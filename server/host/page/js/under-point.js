// world: main
// What is under a viewer's pointer: the cursor to show, and for a context menu the link,
// image, whether it is editable and the selected text. Main world: it shows the viewer the
// page as the page presents itself; nothing here is a safety decision.
(/** @param {[number, number]} point */
([x, y]) => {
  const el = document.elementFromPoint(x, y);
  if (!el) return { cursor: 'auto', link: null, image: null, editable: false, selection: '' };
  const link = /** @type {HTMLAnchorElement | null} */ (el.closest('a[href]'));
  const image = /** @type {HTMLImageElement | null} */ (el.closest('img'));
  const editable = /** @type {HTMLElement} */ (el).isContentEditable || ['INPUT', 'TEXTAREA'].includes(el.tagName);
  return {
    cursor: getComputedStyle(el).cursor, link: link ? link.href : null,
    image: image ? image.currentSrc || image.src : null, editable,
    selection: String(getSelection()),
  };
})
