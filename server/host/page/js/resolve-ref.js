// world: isolated
// The element a snapshot ref names, from the world's registry; isolated, so the page cannot
// swap what a ref resolves to or hide that it changed.
// include: lib/world.js
(/** @param {{revision: number, key: string, n: number, current: boolean}} ref */
({ revision, key, n, current }) => {
  const registry = registryOf(revision, key);
  if (!registry) return { status: 'pageChanged' };
  if (registry.owner && !registry.owner.isConnected) return { status: 'frameGone' };
  if (!registryCurrent(registry)) return { status: 'pageChanged' };
  const el = registry.elements[n];
  if (!el || !registry.info[n]) return { status: 'missing' };
  if (!el.isConnected) return { status: 'gone' };
  if (!current && registry.mutations > 0) return { status: 'changed' };
  return { status: 'ok', pick: pick(el) };
})
