/**
 * A provider's status in words. "Ready" only once a test in this view got an answer from
 * the provider with its key: a keyless provider, or one whose last request failed, never is.
 */

export interface ProviderFacts {
  keySet: boolean;
  usable: boolean;
  unusableReason: string | null;
  lastError: string | null;
}

/** What a test said: `ok` when the provider answered with its key. */
export interface ProviderTest {
  ok: boolean;
  message: string;
}

export type ProviderState = 'ready' | 'failing' | 'untested' | 'unusable';

export function providerState(provider: ProviderFacts, test: ProviderTest | null): ProviderState {
  if (!provider.usable) return 'unusable';
  if (test ? !test.ok : provider.lastError !== null) return 'failing';
  return test?.ok ? 'ready' : 'untested';
}

/** The badge's words; the reason a provider is unusable is said once, here. */
export function providerStatusText(provider: ProviderFacts, test: ProviderTest | null): string {
  switch (providerState(provider, test)) {
    case 'ready':
      return 'Ready';
    case 'failing':
      return 'Failing';
    case 'untested':
      return 'Key set, not tested';
    case 'unusable':
      return provider.unusableReason ? provider.unusableReason.charAt(0).toUpperCase() + provider.unusableReason.slice(1) : 'Not usable';
  }
}
