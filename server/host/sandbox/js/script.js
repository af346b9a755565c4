(async () => {/*@agent-script@*/
})()
// The agent's script, put in place of the marker above, as the body of an async
// function; the host drives the promise it returns and reads its outcome through the
// engine, so nothing in the script's text shapes the result. (These lines come last,
// and the script starts on the first line, so its line numbers stay as the agent wrote
// them.)
