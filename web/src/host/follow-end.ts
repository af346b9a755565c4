/**
 * A list that grows at its end (a conversation) follows its newest item while the person
 * reads at the end, and stays put once they scroll up to read something earlier.
 */

/** The scroll facts of a box, as an element has them. */
export interface ScrollBox {
  scrollTop: number;
  clientHeight: number;
  scrollHeight: number;
}

/** How near the end, in CSS pixels, still counts as reading at the end. */
export const END_SLACK = 32;

/** Whether the box shows its end (within `END_SLACK`): what it gains next is scrolled to. */
export function showsEnd(box: ScrollBox): boolean {
  return box.scrollHeight - box.scrollTop - box.clientHeight <= END_SLACK;
}

/** A box's sizes: what changes when the window is resized or the content reflows. */
interface Sizes {
  clientWidth: number;
  clientHeight: number;
  scrollHeight: number;
}

/**
 * Whether a conversation follows its end. Only the person's own scrolling decides: a scroll
 * the browser makes because the box was resized or its text reflowed (the sizes changed
 * since last seen) keeps following as it was, so a resized window still shows new messages.
 */
export class EndFollower {
  following = true;
  private seen: Sizes | null = null;

  /** A scroll event: the person's scroll decides whether to follow; a layout's does not. */
  scrolled(box: ScrollBox & Sizes): void {
    const seen = this.seen;
    const laidOut = seen !== null && (seen.clientWidth !== box.clientWidth || seen.clientHeight !== box.clientHeight || seen.scrollHeight !== box.scrollHeight);
    this.note(box);
    if (!laidOut) this.following = showsEnd(box);
  }

  /** The box was resized or gained an item: whether to scroll it to its end now. The
   * caller notes the box again (`settled`) once it scrolled. */
  changed(): boolean {
    return this.following;
  }

  /** The box's sizes once it is laid out (and scrolled to its end, when following). */
  settled(box: Sizes): void {
    this.note(box);
  }

  private note(box: Sizes): void {
    this.seen = { clientWidth: box.clientWidth, clientHeight: box.clientHeight, scrollHeight: box.scrollHeight };
  }
}
