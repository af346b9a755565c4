// world: isolated
// Do two picks name the same element? What a person approved is held to what the action
// resolves to; isolated, so the page cannot claim an element is another. False when this
// world no longer knows either pick (a new document).
// include: lib/world.js
(/** @param {{id: string, other: string}} pair */
({ id, other }) => {
  const a = picked(id);
  const b = picked(other);
  return !!a && !!b && a.el === b.el;
})
