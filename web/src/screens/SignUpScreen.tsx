import { getSetupState, signUp } from '../api/endpoints';
import type { AccountView } from '../api/types';
import { AuthLayout } from '../components/AuthLayout';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { SignUpForm } from '../components/SignUpForm';
import { routePath } from '../router';
import { useLoad } from '../use-load';

/** Sign-up without an invitation, where the hub allows it (open sign-up). */
export function SignUpScreen({ onSignedIn }: { onSignedIn: (account: AccountView) => void }) {
  const setup = useLoad(getSetupState, []);
  const signInLink = (
    <>
      Already have an account? <Link href={routePath({ name: 'signin', next: null })}>Sign in</Link>
    </>
  );
  if (setup.loading && !setup.data) {
    return (
      <AuthLayout title="Create an account">
        <Loading />
      </AuthLayout>
    );
  }
  if (!setup.data?.openSignup) {
    return (
      <AuthLayout
        title="Sign-up needs an invitation"
        lead="This hub lets people in by invitation only. Ask an owner or admin of your team for an invitation link."
        footer={signInLink}
      >
        <Link class="btn btn-secondary btn-block" href={routePath({ name: 'signin', next: null })}>
          Back to sign in
        </Link>
      </AuthLayout>
    );
  }
  return (
    <AuthLayout title="Create an account" lead="Then create a team, or join one with an invitation link." footer={signInLink}>
      <SignUpForm
        submitLabel="Create account"
        onSubmit={async (values) => {
          const { name, email, password } = values;
          const signedIn = await signUp({ name, email, password, client: 'browser' });
          onSignedIn(signedIn.account);
        }}
      />
    </AuthLayout>
  );
}
