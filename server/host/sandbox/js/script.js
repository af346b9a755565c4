await (async () => {
  let value = null, error = null;
  try {
    value = await (async () => {
/*@agent-script@*/
    })();
  } catch (e) {
    error = { name: String((e && e.name) || 'Error'),
              message: String(e && e.message !== undefined ? e.message : e),
              code: e && typeof e.code === 'string' ? e.code : null };
  }
  let text;
  try { text = JSON.stringify(value === undefined ? null : value); }
  catch (e) { error = error || { name: 'TypeError', message: 'the script returned a value that is not JSON', code: null }; }
  return JSON.stringify({ value: text === undefined ? 'null' : text, error, log: __crewhostLog() });
})()
// The agent's script, put in place of the marker above, as the body of an async function
// whose outcome is one JSON text: a `return` gives its value, `undefined` becomes null.
// (These lines come last so a script's line numbers stay as the agent wrote them.)
