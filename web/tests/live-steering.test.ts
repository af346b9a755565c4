/** Steering a tab like a browser: click counting, what a key press sends, typed text in parts. */
import { describe, expect, it } from 'vitest';
import { ClickCounter, MULTI_CLICK_MS, MULTI_CLICK_PX } from '../src/host/click-count';
import { composing, inputAction, keyDownAction, type KeyLike } from '../src/host/key-input';
import { MAX_TYPED_TEXT, textParts } from '../src/host/live-view';
import protocol from '../src/host/protocol.json';

function key(key: string, extra: Partial<KeyLike> = {}): KeyLike {
  return { key, code: '', altKey: false, ctrlKey: false, metaKey: false, shiftKey: false, repeat: false, isComposing: false, ...extra };
}

describe('ClickCounter', () => {
  it('counts a double and a triple click of one button, near and soon, and stops at three', () => {
    const clicks = new ClickCounter();
    expect(clicks.press(0, 100, 100, 1000)).toBe(1);
    expect(clicks.release(0)).toBe(1);
    expect(clicks.press(0, 102, 99, 1200)).toBe(2);
    expect(clicks.release(0)).toBe(2);
    expect(clicks.press(0, 101, 101, 1400)).toBe(3);
    expect(clicks.release(0)).toBe(3);
    expect(clicks.press(0, 101, 101, 1600)).toBe(3);
  });

  it('starts again after a pause, a move or another button', () => {
    const clicks = new ClickCounter();
    clicks.press(0, 100, 100, 0);
    expect(clicks.press(0, 100, 100, MULTI_CLICK_MS + 1)).toBe(1);
    expect(clicks.press(0, 100 + MULTI_CLICK_PX + 1, 100, MULTI_CLICK_MS + 100)).toBe(1);
    expect(clicks.press(2, 100 + MULTI_CLICK_PX + 1, 100, MULTI_CLICK_MS + 200)).toBe(1);
    expect(clicks.press(0, 100 + MULTI_CLICK_PX + 1, 100 + MULTI_CLICK_PX, MULTI_CLICK_MS + 300)).toBe(1);
    expect(clicks.press(0, 100 + MULTI_CLICK_PX + 1, 100 + MULTI_CLICK_PX, MULTI_CLICK_MS + 300 + MULTI_CLICK_MS)).toBe(2);
  });
});

describe('keyDownAction', () => {
  it('sends a printable key with its text, an editing key without', () => {
    expect(keyDownAction(key('a', { code: 'KeyA' }))).toEqual({ kind: 'key', key: 'a', code: 'KeyA', text: 'a', modifiers: 0, repeat: false });
    expect(keyDownAction(key('é', { code: 'Digit2' }))).toMatchObject({ text: 'é' });
    expect(keyDownAction(key('😀'))).toMatchObject({ text: '😀' });
    expect(keyDownAction(key('Backspace', { code: 'Backspace', repeat: true }))).toEqual({ kind: 'key', key: 'Backspace', code: 'Backspace', text: '', modifiers: 0, repeat: true });
    expect(keyDownAction(key('ArrowLeft', { code: 'ArrowLeft', shiftKey: true }))).toMatchObject({ text: '', modifiers: 8 });
    expect(keyDownAction(key('Tab', { code: 'Tab' }))).toMatchObject({ kind: 'key', text: '' });
  });

  it('sends shortcuts without text, with their modifiers', () => {
    expect(keyDownAction(key('a', { code: 'KeyA', ctrlKey: true }))).toMatchObject({ kind: 'key', text: '', modifiers: 2 });
    expect(keyDownAction(key('z', { code: 'KeyZ', metaKey: true, shiftKey: true }))).toMatchObject({ kind: 'key', text: '', modifiers: 12 });
  });

  it('types what AltGr makes, without Ctrl and Alt', () => {
    const altGr = key('@', { code: 'KeyQ', ctrlKey: true, altKey: true, getModifierState: (name) => name === 'AltGraph' });
    expect(keyDownAction(altGr)).toMatchObject({ kind: 'key', text: '@', modifiers: 0 });
  });

  it('copies and cuts with Ctrl or ⌘, on any layout, and leaves paste to the browser', () => {
    expect(keyDownAction(key('c', { code: 'KeyC', ctrlKey: true }))).toEqual({ kind: 'copy' });
    expect(keyDownAction(key('x', { code: 'KeyX', metaKey: true }))).toEqual({ kind: 'cut' });
    expect(keyDownAction(key('с', { code: 'KeyC', ctrlKey: true }))).toEqual({ kind: 'copy' });
    expect(keyDownAction(key('v', { code: 'KeyV', ctrlKey: true }))).toEqual({ kind: 'browser' });
    expect(keyDownAction(key('C', { code: 'KeyC', ctrlKey: true, shiftKey: true }))).toMatchObject({ kind: 'key' });
  });

  it('leaves compositions to the browser', () => {
    expect(keyDownAction(key('Process', { code: 'KeyN' }))).toEqual({ kind: 'browser' });
    expect(keyDownAction(key('Dead', { code: 'Quote' }))).toEqual({ kind: 'browser' });
    expect(keyDownAction(key('n', { code: 'KeyN', isComposing: true }))).toEqual({ kind: 'browser' });
    expect(composing(key('Unidentified'))).toBe(true);
    expect(composing(key('a'))).toBe(false);
  });
});

describe('inputAction', () => {
  it('turns text no key carried into text, and a phone’s editing into keys', () => {
    expect(inputAction('insertText', '日本語')).toEqual({ kind: 'text', text: '日本語' });
    expect(inputAction('insertText', '')).toBeNull();
    expect(inputAction('deleteContentBackward', null)).toEqual({ kind: 'key', key: 'Backspace', code: 'Backspace' });
    expect(inputAction('insertLineBreak', null)).toEqual({ kind: 'key', key: 'Enter', code: 'Enter' });
    expect(inputAction('formatBold', null)).toBeNull();
  });
});

describe('textParts', () => {
  it('keeps short text whole and never splits a surrogate pair', () => {
    expect(textParts('ß日本語😀')).toEqual(['ß日本語😀']);
    const long = 'a'.repeat(MAX_TYPED_TEXT - 1) + '😀' + 'b';
    const parts = textParts(long);
    expect(parts.join('')).toBe(long);
    expect(parts[0]).toBe('a'.repeat(MAX_TYPED_TEXT - 1));
    expect(parts.every((part) => part.length <= MAX_TYPED_TEXT)).toBe(true);
  });

  it('takes no more than the host does', () => {
    expect(protocol.components.schemas.Text.properties.text.maxLength).toBe(MAX_TYPED_TEXT);
  });
});
