// world: main
// Whether a popup was opened without an opener (noopener): such a tab stands on its own.
// Main world: `window.opener` is the page's own link to the tab that opened it.
(() => window.opener === null)
