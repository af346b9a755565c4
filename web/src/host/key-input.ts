/**
 * What a key press on the live view sends to the host's page. A key that types one
 * character carries it as `text`; editing and navigation keys go without text (the host
 * adds what Chromium needs). Keys that only start a composition (IME, dead keys, a phone's
 * keyboard) are left to the browser: their text arrives whole at `compositionend` or
 * `beforeinput`. Ctrl/⌘+C and X copy and cut the page's selection; Ctrl/⌘+V is left to
 * the browser's own paste event, the one way to read the clipboard without asking.
 */

import { modifierBits } from './protocol';

export interface KeyLike {
  key: string;
  code: string;
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  repeat: boolean;
  isComposing: boolean;
  getModifierState?(key: string): boolean;
}

export type KeyDownAction =
  | { kind: 'key'; key: string; code: string; text: string; modifiers: number; repeat: boolean }
  | { kind: 'copy' | 'cut' }
  /** Leave the event to the browser: a composition, or a paste. */
  | { kind: 'browser' };

const COMPOSING_KEYS = new Set(['Process', 'Dead', 'Unidentified', 'Compose']);
const MAX_KEY = 32;

/** True for a key event that belongs to a composition (its text comes later, whole). */
export function composing(event: KeyLike): boolean {
  return event.isComposing || COMPOSING_KEYS.has(event.key);
}

/** What to do with a `keydown` on the live view while holding the tab. */
export function keyDownAction(event: KeyLike): KeyDownAction {
  if (composing(event)) return { kind: 'browser' };
  // AltGr arrives as Ctrl+Alt on Windows; what it types is a character, not a shortcut.
  const altGraph = event.getModifierState?.('AltGraph') ?? false;
  const command = (event.ctrlKey || event.metaKey) && !altGraph;
  if (command && !event.altKey && !event.shiftKey) {
    // By what the key types, or where it is when it types no Latin letter (Ctrl+С in Russian).
    const letter = /^[a-z]$/i.test(event.key) ? event.key.toLowerCase() : event.code === 'KeyC' ? 'c' : event.code === 'KeyX' ? 'x' : event.code === 'KeyV' ? 'v' : '';
    if (letter === 'c') return { kind: 'copy' };
    if (letter === 'x') return { kind: 'cut' };
    if (letter === 'v') return { kind: 'browser' };
  }
  const printable = [...event.key].length === 1 && !command;
  const modifiers = modifierBits({ altKey: event.altKey && !altGraph, ctrlKey: event.ctrlKey && !altGraph, metaKey: event.metaKey, shiftKey: event.shiftKey });
  return { kind: 'key', key: event.key.slice(0, MAX_KEY), code: event.code.slice(0, MAX_KEY), text: printable ? event.key : '', modifiers, repeat: event.repeat };
}

/** What a `beforeinput` no key press accounted for stands for: text, an editing key, or nothing. */
export function inputAction(inputType: string, data: string | null): { kind: 'text'; text: string } | { kind: 'key'; key: string; code: string } | null {
  switch (inputType) {
    case 'insertText':
    case 'insertReplacementText':
      return data ? { kind: 'text', text: data } : null;
    case 'deleteContentBackward':
      return { kind: 'key', key: 'Backspace', code: 'Backspace' };
    case 'deleteContentForward':
      return { kind: 'key', key: 'Delete', code: 'Delete' };
    case 'insertLineBreak':
    case 'insertParagraph':
      return { kind: 'key', key: 'Enter', code: 'Enter' };
    default:
      return null;
  }
}
