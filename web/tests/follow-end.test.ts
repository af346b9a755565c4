/** A conversation follows its newest item only while the person reads at its end. */
import { describe, expect, it } from 'vitest';
import { END_SLACK, EndFollower, showsEnd } from '../src/host/follow-end';

describe('showsEnd', () => {
  it('holds at the end and within the slack of it', () => {
    expect(showsEnd({ scrollTop: 600, clientHeight: 400, scrollHeight: 1000 })).toBe(true);
    expect(showsEnd({ scrollTop: 600 - END_SLACK, clientHeight: 400, scrollHeight: 1000 })).toBe(true);
  });

  it('holds for a list that does not scroll at all', () => {
    expect(showsEnd({ scrollTop: 0, clientHeight: 400, scrollHeight: 300 })).toBe(true);
  });

  it('does not hold once the person scrolled up to read', () => {
    expect(showsEnd({ scrollTop: 600 - END_SLACK - 1, clientHeight: 400, scrollHeight: 1000 })).toBe(false);
    expect(showsEnd({ scrollTop: 0, clientHeight: 400, scrollHeight: 1000 })).toBe(false);
  });
});

describe('EndFollower', () => {
  const box = (scrollTop: number, clientHeight = 400, scrollHeight = 1000, clientWidth = 800) => ({ scrollTop, clientHeight, scrollHeight, clientWidth });

  it('follows from the start and stops once the person scrolls up', () => {
    const follower = new EndFollower();
    expect(follower.changed()).toBe(true);
    follower.settled(box(600));
    follower.scrolled(box(100));
    expect(follower.changed()).toBe(false);
    follower.scrolled(box(600));
    expect(follower.changed()).toBe(true);
  });

  it('keeps following after the window is resized and the browser moved the scroll', () => {
    const follower = new EndFollower();
    follower.settled(box(600));
    // Narrower and shorter: the text reflows, the browser keeps the old offset.
    follower.scrolled(box(600, 300, 1400, 390));
    expect(follower.changed()).toBe(true);
    follower.settled(box(1100, 300, 1400, 390));
    // A new message arrives and is followed; the person's own scroll up still stops it.
    follower.scrolled(box(200, 300, 1400, 390));
    expect(follower.changed()).toBe(false);
  });

  it('stays put after a resize when the person had scrolled up', () => {
    const follower = new EndFollower();
    follower.settled(box(600));
    follower.scrolled(box(100));
    follower.scrolled(box(100, 700, 1000, 1200));
    expect(follower.changed()).toBe(false);
  });
});
