// world: isolated
// What the tools keep between calls in their own world, out of the page's reach: the snapshot
// registries refs resolve through, and the elements resolved targets name ("picks").
const MAX_PICKS = 64;

/** @returns {ToolsWorld} */
const toolsWorld = () => {
  if (!globalThis.crewhostTools) throw new Error('the tools world is not set up');
  return globalThis.crewhostTools;
};

/**
 * Names `el` for the calls that follow (its facts, its focus, the action's handle); the
 * newest MAX_PICKS names are kept.
 * @param {Element} el
 * @returns {string}
 */
const pick = (el) => {
  const world = toolsWorld();
  world.picked += 1;
  const id = 'p' + world.picked;
  const view = el.ownerDocument.defaultView;
  const owner = el.ownerDocument !== document && view ? view.frameElement : null;
  world.picks.set(id, { el, owner: /** @type {HTMLIFrameElement | null} */ (owner) });
  for (const old of world.picks.keys()) {
    if (world.picks.size <= MAX_PICKS) break;
    world.picks.delete(old);
  }
  return id;
};

/**
 * The element `id` names, if this world still knows it.
 * @param {string} id
 * @returns {Picked | null}
 */
const picked = (id) => toolsWorld().picks.get(id) || null;

/**
 * The forms that hold the picked fields `ids`, each once; null when one went away.
 * @param {string[]} ids
 * @returns {HTMLFormElement[] | null}
 */
const formsOfPicked = (ids) => {
  /** @type {HTMLFormElement[]} */
  const forms = [];
  for (const id of ids) {
    const held = picked(id);
    if (!held) return null;
    const form = /** @type {HTMLInputElement} */ (held.el).form;
    if (form && !forms.includes(form)) forms.push(form);
  }
  return forms;
};

/**
 * The registry of one frame of a snapshot revision, if this world still holds it.
 * @param {number} revision
 * @param {string} key
 * @returns {SnapshotRegistry | null}
 */
const registryOf = (revision, key) => {
  const parts = toolsWorld().snapshots.get(revision);
  return (parts && parts.get(key)) || null;
};

/**
 * Whether the registry's document is still the one its frame shows.
 * @param {SnapshotRegistry} registry
 */
const registryCurrent = (registry) =>
  !registry.owner || (registry.owner.isConnected && registry.owner.contentDocument === registry.doc);
