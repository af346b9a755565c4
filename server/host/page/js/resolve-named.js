// world: isolated
// The one element of a snapshot with a role and/or accessible name, from the world's
// registries; isolated, like every ref.
// include: lib/world.js
(/** @param {{revision: number, role: string | null, name: string | null}} wanted */
({ revision, role, name }) => {
  const parts = toolsWorld().snapshots.get(revision);
  if (!parts) return { status: 'pageChanged', count: 0, pick: null };
  /** @param {string | null} s */
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  /** @type {Element[]} */
  const hits = [];
  for (const registry of parts.values()) {
    if (!registryCurrent(registry)) return { status: 'pageChanged', count: 0, pick: null };
    registry.info.forEach((item, n) => {
      const el = registry.elements[n];
      if (!item || !el || !el.isConnected) return;
      if (role !== null && item[0] !== role) return;
      if (name !== null && norm(item[1]) !== norm(name)) return;
      hits.push(el);
    });
  }
  return { status: 'ok', count: hits.length, pick: hits.length === 1 ? pick(hits[0]) : null };
})
