// world: main
// The viewport's size in CSS pixels, `[width, height]`, for a scroll by one screen. Main
// world: the size the page itself lays out in.
(() => [innerWidth, innerHeight])
