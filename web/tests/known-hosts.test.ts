/** Pinned host keys: first sight pins, a change is refused, a confirmed key replaces it. */
import { beforeEach, describe, expect, it } from 'vitest';
import { checkHostKey, HostKeyChanged, replaceHostKey } from '../src/host/known-hosts';

beforeEach(() => localStorage.clear());

describe('known hosts', () => {
  it('pins per account and host, and refuses a changed key', () => {
    checkHostKey('a1', 'h1', 'key-one');
    checkHostKey('a1', 'h1', 'key-one');
    checkHostKey('a2', 'h1', 'key-two'); // another account pins its own
    expect(() => checkHostKey('a1', 'h1', 'key-two')).toThrow(HostKeyChanged);
    replaceHostKey('a1', 'h1', 'key-two');
    checkHostKey('a1', 'h1', 'key-two');
    expect(Object.keys(localStorage)).toEqual(expect.arrayContaining(['crewhost.knownHosts.a1', 'crewhost.knownHosts.a2']));
  });

  it('treats an unreadable store as empty rather than failing', () => {
    localStorage.setItem('crewhost.knownHosts.a1', '{not json');
    checkHostKey('a1', 'h1', 'key-one');
    expect(JSON.parse(localStorage.getItem('crewhost.knownHosts.a1') ?? '')).toEqual({ h1: 'key-one' });
  });
});
