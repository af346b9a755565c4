// world: isolated
// Names the main frame's current document (its time origin): a new document has a new one.
// Isolated, so the page cannot pose as a document already searched.
(() => performance.timeOrigin)
