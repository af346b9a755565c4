import { useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { acceptInvitation, previewInvitation, probeMe, signOut, signUp } from '../api/endpoints';
import type { AccountView, InvitationPreview, TeamView } from '../api/types';
import { AuthLayout } from '../components/AuthLayout';
import { Avatar } from '../components/Avatar';
import { Banner } from '../components/Banner';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { SignUpForm } from '../components/SignUpForm';
import { describeError } from '../error-messages';
import { routePath } from '../router';
import { ROLE_LABELS } from '../roles';
import { formatRelative } from '../time-format';
import { useLoad } from '../use-load';
import { TimeText } from '../components/TimeText';

interface JoinScreenProps {
  code: string;
  onSignedIn: (account: AccountView) => void;
  onJoined: (team: TeamView) => void;
}

/** Who is looking: an account, or nobody (a 401 is an answer here, not an error). */
async function whoIsHere(): Promise<AccountView | null> {
  try {
    return await probeMe();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

function Offer({ preview }: { preview: InvitationPreview }) {
  return (
    <div class="invite-offer">
      <span class="invite-offer-label">You are invited to</span>
      <strong class="invite-offer-team">{preview.teamName}</strong>
      <span class="invite-offer-meta">
        as <span class={`badge badge-role-${preview.role}`}>{ROLE_LABELS[preview.role]}</span> · link
        expires <TimeText at={preview.expiresAt} text={formatRelative(preview.expiresAt)} />
      </span>
    </div>
  );
}

/** An invitation link: see the team and role, then join with a new or the current account. */
export function JoinScreen({ code, onSignedIn, onJoined }: JoinScreenProps) {
  const preview = useLoad(() => previewInvitation(code), [code]);
  const viewer = useLoad(whoIsHere, []);
  const [acceptError, setAcceptError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const signInHref = routePath({ name: 'signin', next: routePath({ name: 'join', code }) });

  if ((preview.loading && !preview.data) || (viewer.loading && viewer.data === null && !viewer.error)) {
    return (
      <AuthLayout title="Join a team">
        <Loading label="Checking the invitation…" />
      </AuthLayout>
    );
  }

  if (preview.error || !preview.data) {
    const invalid = preview.error instanceof ApiError && preview.error.code === 'invitationInvalid';
    return (
      <AuthLayout
        title={invalid ? 'This invitation is not valid' : 'Join a team'}
        lead={
          invalid
            ? 'It may have expired, been used up or been revoked. Ask the person who sent it for a new link.'
            : undefined
        }
      >
        {invalid ? null : <Banner tone="error">{describeError(preview.error)}</Banner>}
        <Link class="btn btn-secondary btn-block" href={routePath({ name: 'home' })}>
          Go to Crewhost
        </Link>
      </AuthLayout>
    );
  }

  const me = viewer.data;
  if (me) {
    async function accept() {
      setBusy(true);
      setAcceptError(null);
      try {
        onJoined(await acceptInvitation(code));
      } catch (error) {
        setAcceptError(error);
        setBusy(false);
      }
    }
    async function switchAccount() {
      await signOut().catch(() => undefined);
      await viewer.reload();
    }
    const already = acceptError instanceof ApiError && acceptError.code === 'alreadyMember';
    return (
      <AuthLayout
        title="Join a team"
        footer={
          <>
            Not {me.name}?{' '}
            <button type="button" class="link-button" onClick={() => void switchAccount()}>
              Sign out and use another account
            </button>
          </>
        }
      >
        <Offer preview={preview.data} />
        <div class="signed-in-as">
          <Avatar name={me.name} seed={me.id} size={36} />
          <div>
            <div class="signed-in-as-name">{me.name}</div>
            <div class="muted">{me.email}</div>
          </div>
        </div>
        {acceptError ? (
          <Banner tone={already ? 'info' : 'error'}>
            {describeError(acceptError)}{' '}
            {already ? <Link href={routePath({ name: 'home' })}>Open Crewhost</Link> : null}
          </Banner>
        ) : null}
        <button type="button" class="btn btn-primary btn-block" disabled={busy || already} onClick={() => void accept()}>
          {busy ? 'Joining…' : `Join ${preview.data.teamName}`}
        </button>
      </AuthLayout>
    );
  }

  return (
    <AuthLayout
      title="Join a team"
      footer={
        <>
          Already have an account? <Link href={signInHref}>Sign in to join</Link>
        </>
      }
    >
      <Offer preview={preview.data} />
      {viewer.error ? <Banner tone="error">{describeError(viewer.error)}</Banner> : null}
      <p class="form-intro">Create your account to join.</p>
      <SignUpForm
        submitLabel="Create account and join"
        onSubmit={async (values) => {
          const { name, email, password } = values;
          const signedIn = await signUp({ name, email, password, invitationCode: code, client: 'browser' });
          onSignedIn(signedIn.account);
        }}
      />
    </AuthLayout>
  );
}
