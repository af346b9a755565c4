import { describe, expect, it, vi } from 'vitest';
import { parseSetupCode, takeSetupCode } from '../src/setup-code';

describe('parseSetupCode', () => {
  it.each([
    ['#code=AbC-123_x', 'AbC-123_x'],
    ['code=plain', 'plain'],
    ['#other=1&code=second', 'second'],
    ['#code=a%2Bb', 'a+b'],
    ['#code=%20padded%20', 'padded'],
  ])('reads %s', (hash, code) => {
    expect(parseSetupCode(hash)).toBe(code);
  });

  it.each(['', '#', '#code=', '#code', '#token=abc', '#code=%20'])('finds no code in %j', (hash) => {
    expect(parseSetupCode(hash)).toBeNull();
  });
});

describe('takeSetupCode', () => {
  it('returns the code and removes the fragment from the address bar', () => {
    window.history.replaceState(null, '', '/app/setup?x=1#code=SECRET');
    expect(takeSetupCode()).toBe('SECRET');
    expect(window.location.pathname).toBe('/app/setup');
    expect(window.location.search).toBe('?x=1');
    expect(window.location.hash).toBe('');
    expect(window.location.href).not.toContain('SECRET');
  });

  it('replaces (not pushes) the history entry', () => {
    const history = { state: null, replaceState: vi.fn() };
    const code = takeSetupCode({ hash: '#code=K', pathname: '/app/setup', search: '' }, history);
    expect(code).toBe('K');
    expect(history.replaceState).toHaveBeenCalledWith(null, '', '/app/setup');
  });

  it('leaves an address without a fragment alone', () => {
    const history = { state: null, replaceState: vi.fn() };
    expect(takeSetupCode({ hash: '', pathname: '/app/setup', search: '' }, history)).toBeNull();
    expect(history.replaceState).not.toHaveBeenCalled();
  });
});
