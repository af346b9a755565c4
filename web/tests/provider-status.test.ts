/** A provider shows Ready only once the host saw it answer; never keyless, failing or re-keyed. */
import { describe, expect, it } from 'vitest';
import { providerErrorText, providerState, providerStatusText } from '../src/host/provider-status';

const keyed = { keySet: true, usable: true, unusableReason: null, lastError: null, verified: false };
const keyless = { keySet: false, usable: false, unusableReason: 'no key is set', lastError: null, verified: false };

describe('providerStatusText', () => {
  it('is Ready only once the provider answered with its key', () => {
    expect(providerStatusText(keyed)).toBe('Key set, not tested');
    expect(providerStatusText({ ...keyed, verified: true })).toBe('Ready');
    // A keyless custom provider that has not answered yet.
    expect(providerStatusText({ ...keyed, keySet: false })).toBe('Not tested');
  });

  it('is never Ready without a key', () => {
    expect(providerStatusText(keyless)).toBe('No key is set');
    expect(providerState({ ...keyless, verified: true })).toBe('unusable');
  });

  it('is Failing after a refused test or a failed request', () => {
    expect(providerStatusText({ ...keyed, lastError: 'Gateway refused the API key (401)' })).toBe('Failing');
    expect(providerStatusText({ ...keyed, lastError: 'overloaded', verified: true })).toBe('Failing');
  });
});

describe('providerErrorText', () => {
  it('names the last error only while the provider is failing', () => {
    expect(providerErrorText({ ...keyed, lastError: 'overloaded' })).toBe('Last error: overloaded');
    // A keyless provider says "No key is set" once, in its badge.
    expect(providerErrorText({ ...keyless, lastError: 'no API key is set for OpenAI' })).toBeNull();
    expect(providerErrorText(keyed)).toBeNull();
  });
});
