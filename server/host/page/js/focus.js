(el) => {
  // Does the element hold focus, through open shadow roots and every frame that holds it?
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) {
    active = active.shadowRoot.activeElement;
  }
  if (active !== el) return false;
  for (let w = window; w !== w.parent; w = w.parent) {
    try {
      if (w.parent.document.activeElement !== w.frameElement) return false;
    } catch (e) {
      break;
    }
  }
  return true;
}
