/**
 * Escape closes the phone menu (the shell's navigation drawer on narrow screens) and puts
 * focus back on its menu button, as a person expects of any open menu.
 */

const OPEN_MENU_BUTTON = '.menu-button[aria-expanded="true"]';

/** Listen on `doc` for Escape while the drawer is open; returns the function that stops it. */
export function closePhoneMenuOnEscape(doc: Document = document): () => void {
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || event.defaultPrevented) return;
    const button = doc.querySelector<HTMLButtonElement>(OPEN_MENU_BUTTON);
    if (!button) return;
    event.preventDefault();
    button.click();
    button.focus();
  };
  doc.addEventListener('keydown', onKeyDown);
  return () => doc.removeEventListener('keydown', onKeyDown);
}
