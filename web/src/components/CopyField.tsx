import { useRef, useState } from 'preact/hooks';
import { Icon } from './Icon';

/** A read-only value (an invitation link) with a Copy button. */
export function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');

  async function copy() {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      // No clipboard access (e.g. plain http on another host): select it for Ctrl+C.
      input.current?.select();
      setState('failed');
    }
  }

  return (
    <div class="field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input
          id={id}
          ref={input}
          type="text"
          readOnly
          value={value}
          onFocus={(event) => event.currentTarget.select()}
          class="mono"
        />
        <button type="button" class="btn btn-secondary" onClick={copy}>
          <Icon name={state === 'copied' ? 'check' : 'copy'} size={16} />
          {state === 'copied' ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p class="field-hint" aria-live="polite">
        {state === 'failed' ? 'Copying is not allowed here: the link is selected, press Ctrl+C.' : ''}
      </p>
    </div>
  );
}
