// world: isolated
// Takes the marks of handle-mark off again and says whether they stayed where they were put,
// once each: a page that moved or copied a mark (to hand the action another element) is
// caught here.
// include: lib/dom.js
// include: lib/world.js
(/** @param {{id: string, mark: string, depth: number}} args */
({ id, mark, depth }) => {
  const ATTRIBUTE = 'data-crewhost-target';
  const held = picked(id);
  const owners = held ? ownerFrames(held.el) : null;
  let kept = !!held && !!owners && owners.length === depth;
  if (held && owners) {
    [...owners, held.el].forEach((node, n) => {
      if (node.getAttribute(ATTRIBUTE) !== mark + ':' + n) kept = false;
      node.removeAttribute(ATTRIBUTE);
    });
  }
  for (const doc of frameDocuments(document)) {
    for (const other of deepQuery(doc, '[' + ATTRIBUTE + ']')) {
      if (!(other.getAttribute(ATTRIBUTE) || '').startsWith(mark + ':')) continue;
      kept = false;
      other.removeAttribute(ATTRIBUTE);
    }
  }
  return kept;
})
