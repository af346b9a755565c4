import { useState } from 'preact/hooks';
import { getSetupState, signIn } from '../api/endpoints';
import type { AccountView } from '../api/types';
import { AuthLayout } from '../components/AuthLayout';
import { Banner } from '../components/Banner';
import { Field } from '../components/Field';
import { Link } from '../components/Link';
import { formErrors, type FormErrors } from '../error-messages';
import { routePath } from '../router';
import { useLoad } from '../use-load';

type FieldName = 'email' | 'password';
const FIELDS: readonly FieldName[] = ['email', 'password'];

interface SignInScreenProps {
  onSignedIn: (account: AccountView) => void;
  /** The person just signed out here: say so, so they know it worked. */
  signedOut?: boolean;
}

export function SignInScreen({ onSignedIn, signedOut = false }: SignInScreenProps) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FormErrors<FieldName>>({ fields: {}, banner: null });
  const [busy, setBusy] = useState(false);
  const setup = useLoad(getSetupState, []);
  const edit = (field: FieldName, setter: (value: string) => void) => (value: string) => {
    setter(value);
    setErrors((old) => (old.fields[field] ? { ...old, fields: { ...old.fields, [field]: undefined } } : old));
  };

  async function submit(event: Event) {
    event.preventDefault();
    const fields: Partial<Record<FieldName, string>> = {};
    if (!email.trim()) fields.email = 'Enter your email address.';
    if (!password) fields.password = 'Enter your password.';
    if (fields.email || fields.password) {
      setErrors({ fields, banner: null });
      return;
    }
    setBusy(true);
    setErrors({ fields: {}, banner: null });
    try {
      const signedIn = await signIn({ email: email.trim(), password, client: 'browser' });
      onSignedIn(signedIn.account);
    } catch (error) {
      setErrors(formErrors(error, FIELDS));
      setBusy(false);
    }
  }

  const openSignup = setup.data?.openSignup === true;
  return (
    <AuthLayout
      title="Sign in"
      lead="Welcome back. Sign in to reach your team's hosts and agents."
      footer={
        openSignup ? (
          <>
            New here? <Link href={routePath({ name: 'signup' })}>Create an account</Link>
          </>
        ) : (
          'New here? Ask an owner or admin of your team for an invitation link.'
        )
      }
    >
      {signedOut ? (
        <Banner tone="success">You signed out.</Banner>
      ) : null}
      {setup.data?.needsSetup ? (
        <Banner tone="info">
          This hub has no accounts yet. Open the setup link it printed when it started, or{' '}
          <Link href={routePath({ name: 'setup' })}>enter the setup code</Link>.
        </Banner>
      ) : null}
      <form class="form" onSubmit={submit} noValidate>
        {errors.banner ? <Banner tone="error">{errors.banner}</Banner> : null}
        <Field id="email" label="Email" type="email" value={email} onValue={edit('email', setEmail)} error={errors.fields.email} autoComplete="username" autoFocus />
        <Field id="password" label="Password" type="password" value={password} onValue={edit('password', setPassword)} error={errors.fields.password} autoComplete="current-password" />
        <button type="submit" class="btn btn-primary btn-block" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </AuthLayout>
  );
}
