import type { ComponentChildren } from 'preact';
import { Icon } from './Icon';

type Tone = 'error' | 'success' | 'info';

/** A message above a form or a page: errors that name no field, confirmations, notes. */
export function Banner({ tone, children }: { tone: Tone; children: ComponentChildren }) {
  return (
    <div class={`banner banner-${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      <Icon name={tone === 'error' ? 'alert' : tone === 'success' ? 'check' : 'info'} />
      <div class="banner-text">{children}</div>
    </div>
  );
}
