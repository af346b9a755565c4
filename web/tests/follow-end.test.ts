/** A conversation follows its newest item only while the person reads at its end. */
import { describe, expect, it } from 'vitest';
import { END_SLACK, showsEnd } from '../src/host/follow-end';

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
