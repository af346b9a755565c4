// world: main
// Selects everything, as a viewer's Ctrl+A does. Main world: an editing command the page
// itself handles.
(() => document.execCommand('selectAll'))
