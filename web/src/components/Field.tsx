import type { JSX } from 'preact';

interface FieldProps {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'email' | 'password' | 'number';
  error?: string | undefined;
  hint?: string;
  autoComplete?: string;
  autoFocus?: boolean;
  disabled?: boolean;
  inputMode?: JSX.HTMLAttributes<HTMLInputElement>['inputMode'];
  min?: number;
  max?: number;
  maxLength?: number;
}

/** A labelled input with its hint and, when the hub or a check refused it, its error. */
export function Field(props: FieldProps) {
  const { id, label, value, onValue, type = 'text', error, hint } = props;
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      <input
        id={id}
        name={id}
        type={type}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
        autoComplete={props.autoComplete}
        autoFocus={props.autoFocus}
        disabled={props.disabled}
        inputMode={props.inputMode}
        min={props.min}
        max={props.max}
        maxLength={props.maxLength}
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
      />
      {hint && !error ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
