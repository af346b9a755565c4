// world: isolated
// Marks a picked element, and the frame elements that hold it, with `data-crewhost-target`
// for the browser's own (also isolated) selector engine to find: how an action gets a handle
// to the element the isolated reads saw. Gives the number of frames between, or null.
// include: lib/dom.js
// include: lib/world.js
(/** @param {{id: string, mark: string}} args */
({ id, mark }) => {
  const held = picked(id);
  if (!held || !held.el.isConnected) return null;
  const owners = ownerFrames(held.el);
  if (!owners) return null;
  [...owners, held.el].forEach((node, depth) => node.setAttribute('data-crewhost-target', mark + ':' + depth));
  return owners.length;
})
