import { useState } from 'preact/hooks';
import { formErrors, type FormErrors } from '../error-messages';
import { Banner } from './Banner';
import { Field } from './Field';

export interface SignUpValues {
  name: string;
  email: string;
  password: string;
  teamName: string;
}

type FieldName = keyof SignUpValues;
const FIELDS: readonly FieldName[] = ['name', 'email', 'password', 'teamName'];
export const MIN_PASSWORD = 10;

/** Checks made before asking the hub, so the common mistakes show at once. */
export function checkSignUp(values: SignUpValues, withTeam: boolean): Partial<Record<FieldName, string>> {
  const errors: Partial<Record<FieldName, string>> = {};
  if (!values.name.trim()) errors.name = 'Enter your name.';
  if (!/^[^@\s]+@[^@\s]+\.[^@\s.]+$/.test(values.email.trim())) errors.email = 'Enter an email address.';
  if (values.password.length < MIN_PASSWORD) errors.password = `Use at least ${MIN_PASSWORD} characters.`;
  if (withTeam && !values.teamName.trim()) errors.teamName = 'Name your team.';
  return errors;
}

interface SignUpFormProps {
  submitLabel: string;
  withTeamName?: boolean;
  onSubmit: (values: SignUpValues) => Promise<void>;
  disabled?: boolean;
}

/** Name, email and password (and the first team's name at setup) for a new account. */
export function SignUpForm({ submitLabel, withTeamName = false, onSubmit, disabled }: SignUpFormProps) {
  const [values, setValues] = useState<SignUpValues>({ name: '', email: '', password: '', teamName: '' });
  const [errors, setErrors] = useState<FormErrors<FieldName>>({ fields: {}, banner: null });
  const [busy, setBusy] = useState(false);
  const set = (field: FieldName) => (value: string) => {
    setValues((old) => ({ ...old, [field]: value }));
    // An error goes away as soon as its field is edited.
    setErrors((old) => (old.fields[field] ? { ...old, fields: { ...old.fields, [field]: undefined } } : old));
  };

  async function submit(event: Event) {
    event.preventDefault();
    const checked = checkSignUp(values, withTeamName);
    if (Object.keys(checked).length > 0) {
      setErrors({ fields: checked, banner: null });
      return;
    }
    setBusy(true);
    setErrors({ fields: {}, banner: null });
    try {
      await onSubmit(values);
    } catch (error) {
      setErrors(formErrors(error, FIELDS));
      setBusy(false);
    }
  }

  return (
    <form class="form" onSubmit={submit} noValidate>
      {errors.banner ? <Banner tone="error">{errors.banner}</Banner> : null}
      <Field id="name" label="Your name" value={values.name} onValue={set('name')} error={errors.fields.name} autoComplete="name" maxLength={100} />
      <Field id="email" label="Email" type="email" value={values.email} onValue={set('email')} error={errors.fields.email} autoComplete="email" />
      <Field
        id="password"
        label="Password"
        type="password"
        value={values.password}
        onValue={set('password')}
        error={errors.fields.password}
        hint={`At least ${MIN_PASSWORD} characters.`}
        autoComplete="new-password"
      />
      {withTeamName ? (
        <Field
          id="teamName"
          label="Team name"
          value={values.teamName}
          onValue={set('teamName')}
          error={errors.fields.teamName}
          hint="The first team you own. You can create more later."
          maxLength={60}
        />
      ) : null}
      <button type="submit" class="btn btn-primary btn-block" disabled={busy || disabled}>
        {busy ? 'Working…' : submitLabel}
      </button>
    </form>
  );
}
