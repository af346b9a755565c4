/** A provider shows Ready only after a test it answered; never keyless or failing. */
import { describe, expect, it } from 'vitest';
import { providerState, providerStatusText } from '../src/host/provider-status';

const keyed = { keySet: true, usable: true, unusableReason: null, lastError: null };
const keyless = { keySet: false, usable: false, unusableReason: 'no key is set', lastError: null };

describe('providerStatusText', () => {
  it('is Ready only after a test the provider answered', () => {
    expect(providerStatusText(keyed, null)).toBe('Key set, not tested');
    expect(providerStatusText(keyed, { ok: true, message: 'Anthropic answered with this key' })).toBe('Ready');
  });

  it('is never Ready without a key, even after a test', () => {
    expect(providerStatusText(keyless, null)).toBe('No key is set');
    expect(providerState(keyless, { ok: true, message: '' })).toBe('unusable');
  });

  it('is Failing after a refused test or a failed request', () => {
    expect(providerStatusText(keyed, { ok: false, message: 'Anthropic refused the API key' })).toBe('Failing');
    expect(providerStatusText({ ...keyed, lastError: 'the provider is overloaded' }, null)).toBe('Failing');
    // A test that answered clears an earlier failure.
    expect(providerStatusText({ ...keyed, lastError: 'overloaded' }, { ok: true, message: '' })).toBe('Ready');
  });
});
