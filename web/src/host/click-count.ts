/**
 * Double and triple clicks for the live view, counted here as Chromium counts them: a press
 * of the same button soon enough after the last and near enough to it counts one more.
 * `PointerEvent.detail` cannot serve: it is 0 on `pointerdown`.
 */

/** The longest gap between presses of one multi-click, in milliseconds. */
export const MULTI_CLICK_MS = 500;
/** How far a press may be from the last one, in CSS pixels each way, and still count. */
export const MULTI_CLICK_PX = 4;
/** The most a click counts: a triple click selects a paragraph, and no more happens after. */
export const MAX_CLICK_COUNT = 3;

interface Press {
  button: number;
  x: number;
  y: number;
  time: number;
  count: number;
}

export class ClickCounter {
  private last: Press | null = null;

  /** The click count of a press of `button` at (`x`, `y`) at `time` (ms). */
  press(button: number, x: number, y: number, time: number): number {
    const last = this.last;
    const again =
      last !== null &&
      last.button === button &&
      time - last.time <= MULTI_CLICK_MS &&
      Math.abs(x - last.x) <= MULTI_CLICK_PX &&
      Math.abs(y - last.y) <= MULTI_CLICK_PX;
    const count = again ? Math.min(MAX_CLICK_COUNT, last.count + 1) : 1;
    this.last = { button, x, y, time, count };
    return count;
  }

  /** The click count a release of `button` carries: that of its press. */
  release(button: number): number {
    return this.last?.button === button ? this.last.count : 1;
  }
}
