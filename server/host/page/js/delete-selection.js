// world: main
// Deletes the selection after a viewer's cut. Main world: an editing command the page itself
// handles.
(() => document.execCommand('delete'))
