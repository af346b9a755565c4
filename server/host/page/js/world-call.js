// world: isolated
// Runs one tool script in the tools' world once it knows the world is its own: a context id
// kept across calls could name another context after the renderer changed.
(/**
  * @param {string} token
  * @param {(arg: unknown) => unknown} run
  * @param {unknown} arg
  */
async (token, run, arg) => {
  if (!globalThis.crewhostTools || globalThis.crewhostTools.token !== token) return { lost: true };
  return { value: await run(arg) };
})
