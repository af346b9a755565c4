/**
 * A provider's status in words, as the host keeps it (so a reload says the same): "Ready"
 * only once the provider answered a test or a turn with its current key and address; a
 * keyless provider, one whose last request failed, or one with a new key never is.
 */

export interface ProviderFacts {
  keySet: boolean;
  usable: boolean;
  unusableReason: string | null;
  lastError: string | null;
  verified: boolean;
}

export type ProviderState = 'ready' | 'failing' | 'untested' | 'unusable';

export function providerState(provider: ProviderFacts): ProviderState {
  if (!provider.usable) return 'unusable';
  if (provider.lastError !== null) return 'failing';
  return provider.verified ? 'ready' : 'untested';
}

/** The badge's words; why a provider cannot be used is said here, once. */
export function providerStatusText(provider: ProviderFacts): string {
  switch (providerState(provider)) {
    case 'ready':
      return 'Ready';
    case 'failing':
      return 'Failing';
    case 'untested':
      return provider.keySet ? 'Key set, not tested' : 'Not tested';
    case 'unusable':
      return provider.unusableReason ? provider.unusableReason.charAt(0).toUpperCase() + provider.unusableReason.slice(1) : 'Not usable';
  }
}

/** The line under the badge: the last failure, only while it is what the badge says. */
export function providerErrorText(provider: ProviderFacts): string | null {
  return providerState(provider) === 'failing' ? `Last error: ${provider.lastError}` : null;
}
