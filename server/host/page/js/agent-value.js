// world: main
// Runs an agent's own script (evaluate, execute_script) and gives its value as JSON text, cut
// in the page: a value longer than the limit never leaves the page, only its length does.
// It runs in the world the agent chose: the page's main world, or the agent's own isolated
// world (never the tools' world); no safety decision reads what it gives.
(/**
  * @param {() => Promise<unknown>} run  the agent's code: its value, or a function to call
  * @param {number} limit  the longest JSON text given back, in characters
  * @returns {Promise<{ json: string } | { fits: true, value: unknown } | { size: number } | { unserializable: true }>}
  */
async (run, limit) => {
  let value = await run();
  if (typeof value === "function") value = await value();
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    return { unserializable: true }; // a cycle, a BigInt, a toJSON that throws
  }
  // undefined, a function or a symbol has no JSON: null, as a property of them would be.
  if (typeof text !== "string") return { json: "null" };
  // A primitive's length: the page cannot replace it, so the cut holds in its main world too.
  if (text.length > limit) return { size: text.length };
  // The value itself, written out by the browser, not by a JSON the page may have replaced.
  return { fits: true, value };
})
