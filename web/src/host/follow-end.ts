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
