// Sandbox prelude: runs first in every sandbox runtime, before the agent's script.
// It takes the host's entry points off the global object, so the script reaches the
// host only through the helpers and console defined here, and each crossing carries
// text. The built-ins it uses are taken now, before the script can replace them.
"use strict";
(() => {
  const host = globalThis.__crewhostHost;
  delete globalThis.__crewhostHost;
  const hostLog = globalThis.__crewhostLog;
  delete globalThis.__crewhostLog;
  const { parse, stringify } = JSON;
  const text = String;
  const helpers = parse(globalThis.__crewhostHelpers || "[]");
  delete globalThis.__crewhostHelpers;

  class StepError extends Error {
    constructor(code, message) {
      super(message);
      this.name = "StepError";
      this.code = code;
    }
  }

  async function call(name, args) {
    const answer = parse(await host(name, text(stringify(args === undefined ? [] : args))));
    if (answer.ok) return answer.value;
    throw new StepError(answer.code, answer.message);
  }

  // A page function becomes its source, so waitFor can run it in the page.
  const plain = (value) =>
    typeof value === "function" ? { __function: text(value) } : value;

  // A waitFor function that itself calls evaluate, snapshot or step is written for the
  // sandbox, not the page: it is polled here once a second (each pause is a step).
  const SANDBOX_CONDITION = /\b(evaluate|snapshot|step)\s*\(/;
  const LONGEST_WAIT_MS = 25000;
  async function waitHere(condition, options) {
    const asked = typeof options === "number" ? options : (options && options.timeout) || LONGEST_WAIT_MS;
    const end = Date.now() + Math.min(asked, LONGEST_WAIT_MS);
    for (;;) {
      const value = await condition();
      if (value) return value;
      if (Date.now() >= end) throw new StepError("waitTimeout", `the condition did not hold within ${asked} ms`);
      await call("sleep", [1000]);
    }
  }

  const helper = (name) => {
    const plainCall = (...args) => call(name, args.map(plain));
    if (name !== "waitFor") return plainCall;
    return (first, ...rest) =>
      typeof first === "function" && SANDBOX_CONDITION.test(text(first))
        ? waitHere(first, rest[0])
        : plainCall(first, ...rest);
  };

  for (const name of helpers) {
    Object.defineProperty(globalThis, name, {
      value: helper(name),
      enumerable: false,
      writable: false,
      configurable: false,
    });
  }
  Object.defineProperty(globalThis, "StepError", { value: StepError });
  if (helpers.includes("step")) {
    // A target by role and name, as other libraries write it: role("button", { name }).
    const role = (kind, name, options) => {
      const given = typeof name === "object" && name !== null ? name : { ...(options || {}), name };
      return given.name === undefined ? { kind: "role", role: kind } : { kind: "role", role: kind, name: text(given.name) };
    };
    Object.defineProperty(globalThis, "role", { value: role });
  }
  // Each line crosses to the host, which keeps the first 200 (2,000 characters each)
  // whatever the script does; the count here only saves crossings past them.
  let logged = 0;
  Object.defineProperty(globalThis, "console", {
    value: Object.freeze({
      log: (...parts) => {
        if (logged >= 200) return;
        logged += 1;
        const shown = (p) => {
          if (typeof p === "string") return p;
          try { return text(stringify(p)); } catch (e) { return text(p); }
        };
        hostLog(text(parts.map(shown).join(" ")).slice(0, 2000));
      },
    }),
  });
})();
