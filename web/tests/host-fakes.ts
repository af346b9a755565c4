/** What the screen tests share: a host connection that records calls and answers from a table, and a place to render. */
import { render, type ComponentChild } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, vi } from 'vitest';
import { HostCallError, type HostConnection } from '../src/host/connection';

/** A connection whose calls are recorded; a route in ``refuse`` fails with that error code. */
export function fakeConnection(answers: Record<string, unknown>, refuse: Record<string, string> = {}) {
  const calls: Array<[string, unknown]> = [];
  const connection = {
    call: vi.fn(async (route: string, args: unknown) => {
      calls.push([route, args]);
      if (refuse[route]) throw new HostCallError(refuse[route], 'refused');
      return answers[route] ?? {};
    }),
    onEvent: () => () => {},
  } as unknown as HostConnection;
  return { connection, calls };
}

/** A fresh element for each test of the calling file, emptied and removed after it. */
export function mountPoint(): { readonly element: HTMLElement } {
  const mount = { element: document.createElement('div') };
  beforeEach(() => {
    mount.element = document.createElement('div');
    document.body.append(mount.element);
  });
  afterEach(() => {
    render(null, mount.element);
    mount.element.remove();
  });
  return mount;
}

/** Render ``node`` and let the first answers it asked for arrive. */
export async function show(node: ComponentChild, into: HTMLElement): Promise<void> {
  await act(async () => {
    render(node, into);
  });
  await act(async () => {});
}

/** Type ``value`` into an input as a person would (one input event). */
export async function typeInto(input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, value: string, event = 'input'): Promise<void> {
  await act(async () => {
    input.value = value;
    input.dispatchEvent(new Event(event, { bubbles: true }));
  });
}

/** Submit ``form`` as its submit button would. */
export async function submit(form: HTMLFormElement): Promise<void> {
  await act(async () => {
    form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
  });
}

/** The button of ``root`` whose text is ``text``. */
export function button(root: Element, text: string): HTMLButtonElement {
  const found = [...root.querySelectorAll<HTMLButtonElement>('button')].find((b) => b.textContent === text);
  if (!found) throw new Error(`no button ${text}`);
  return found;
}
