// world: main
// Tells the host when the page asks for a passkey: navigator.credentials.get or create with
// `publicKey` options, except a conditional (autofill) request, which waits silently for the
// user to pick one. Main world, since that is where the page calls the API: the call goes
// on unchanged, and the host sends a person. A page can report a prompt it never made (that
// only asks a person) but a call through the API is always reported.
(/** @param {string} binding */
(binding) => {
  const scope = /** @type {any} */ (globalThis);
  /** @type {(payload: string) => void} */
  const send = scope[binding];
  if (typeof send !== 'function' || typeof scope.CredentialsContainer !== 'function') return;
  try {
    delete scope[binding];  // kept in this closure only
  } catch (_) {
    // A binding that stays named on the page is harmless: a report only asks a person.
  }
  const proto = scope.CredentialsContainer.prototype;
  for (const ceremony of ['get', 'create']) {
    const original = proto[ceremony];
    if (typeof original !== 'function') continue;
    const watched = new Proxy(original, {
      /** @param {Function} target @param {unknown} self @param {any[]} args */
      apply(target, self, args) {
        const options = args[0];
        if (options && typeof options === 'object' && options.publicKey
            && options.mediation !== 'conditional') {
          try {
            send(JSON.stringify({ ceremony, document: performance.timeOrigin }));
          } catch (_) {
            // The report is best effort; the page's call goes on regardless.
          }
        }
        return Reflect.apply(target, self, args);
      },
    });
    Object.defineProperty(proto, ceremony, { value: watched, writable: true, configurable: true });
  }
})
