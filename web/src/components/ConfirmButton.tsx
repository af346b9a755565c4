import { useState } from 'preact/hooks';

interface ConfirmButtonProps {
  label: string;
  /** The question shown before the action runs, e.g. "Remove Ada?" */
  question: string;
  confirmLabel: string;
  onConfirm: () => Promise<void> | void;
  tone?: 'danger' | 'secondary';
  size?: 'sm' | 'md';
  disabled?: boolean;
  /** Told when the question shows and when it goes, so a row can make room for it. */
  onAskingChange?: (asking: boolean) => void;
}

/** A button that asks once, in place, before doing something that cannot be undone. */
export function ConfirmButton(props: ConfirmButtonProps) {
  const [asking, setAskingState] = useState(false);
  const [busy, setBusy] = useState(false);
  const setAsking = (value: boolean) => {
    setAskingState(value);
    props.onAskingChange?.(value);
  };
  const size = props.size === 'sm' ? ' btn-sm' : '';
  const tone = props.tone === 'secondary' ? 'btn-secondary' : 'btn-danger';

  async function confirm() {
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
      setAsking(false);
    }
  }

  if (!asking) {
    return (
      <button type="button" class={`btn ${tone}${size}`} disabled={props.disabled} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={props.question}>
      <span class="confirm-question">{props.question}</span>
      <button type="button" class={`btn btn-danger-solid${size}`} disabled={busy} onClick={confirm}>
        {busy ? 'Working…' : props.confirmLabel}
      </button>
      <button type="button" class={`btn btn-ghost${size}`} disabled={busy} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
