// world: isolated
// Sets up a new tools world: its token, which every later call checks, and empty registries.
(/** @param {string} token */
(token) => {
  globalThis.crewhostTools = { token, snapshots: new Map(), picks: new Map(), picked: 0 };
})
