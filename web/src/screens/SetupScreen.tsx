import { useState } from 'preact/hooks';
import { getSetupState, signUp } from '../api/endpoints';
import type { AccountView } from '../api/types';
import { AuthLayout } from '../components/AuthLayout';
import { Banner } from '../components/Banner';
import { Field } from '../components/Field';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { SignUpForm } from '../components/SignUpForm';
import { describeError } from '../error-messages';
import { routePath } from '../router';
import { takeSetupCode } from '../setup-code';
import { useLoad } from '../use-load';

/** First start: the person holding the setup code becomes the hub's first owner. */
export function SetupScreen({ onSignedIn }: { onSignedIn: (account: AccountView) => void }) {
  // Read once, then gone from the address bar.
  const [code, setCode] = useState<string | null>(() => takeSetupCode());
  const [typed, setTyped] = useState('');
  const [typedError, setTypedError] = useState<string>();
  const state = useLoad(getSetupState, []);

  if (state.loading && !state.data) {
    return (
      <AuthLayout title="Set up Crewhost">
        <Loading />
      </AuthLayout>
    );
  }
  if (state.error) {
    return (
      <AuthLayout title="Set up Crewhost">
        <Banner tone="error">{describeError(state.error)}</Banner>
        <button type="button" class="btn btn-secondary btn-block" onClick={() => void state.reload()}>
          Try again
        </button>
      </AuthLayout>
    );
  }
  if (state.data && !state.data.needsSetup) {
    return (
      <AuthLayout
        title="This hub is set up"
        lead="It already has its first owner. Sign in, or ask an owner or admin of your team for an invitation link."
      >
        <Link class="btn btn-primary btn-block" href={routePath({ name: 'signin', next: null })}>
          Go to sign in
        </Link>
      </AuthLayout>
    );
  }

  if (code === null) {
    return (
      <AuthLayout
        title="Set up Crewhost"
        lead="Enter the setup code the hub printed when it first started. (Opening the printed setup link fills it in for you.)"
      >
        <form
          class="form"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            if (!typed.trim()) setTypedError('Enter the setup code.');
            else setCode(typed.trim());
          }}
        >
          <Field id="setupCode" label="Setup code" value={typed} onValue={setTyped} error={typedError} autoComplete="off" />
          <button type="submit" class="btn btn-primary btn-block">
            Continue
          </button>
        </form>
      </AuthLayout>
    );
  }

  return (
    <AuthLayout
      title="Set up Crewhost"
      lead="Create the first account. It will own the hub's first team; you can invite the rest of your crew next."
      footer={
        <button type="button" class="link-button" onClick={() => setCode(null)}>
          Use a different setup code
        </button>
      }
    >
      <SignUpForm
        submitLabel="Create owner account"
        withTeamName
        onSubmit={async (values) => {
          const signedIn = await signUp({ ...values, setupCode: code, client: 'browser' });
          onSignedIn(signedIn.account);
        }}
      />
    </AuthLayout>
  );
}
