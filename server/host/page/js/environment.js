// world: main
// The viewport, language and time zone the page sees, read back after set_environment. Main
// world: what matters is what the page's own scripts are told.
(() => ({
  viewport: { width: innerWidth, height: innerHeight },
  locale: navigator.language,
  timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
}))
