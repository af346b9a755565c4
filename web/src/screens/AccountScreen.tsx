import { useEffect, useState } from 'preact/hooks';
import {
  avatarUrl,
  deleteAvatar,
  listSessions,
  putAvatar,
  revokeOtherSessions,
  revokeSession,
  updateProfile,
} from '../api/endpoints';
import type { SessionView } from '../api/types';
import { Avatar } from '../components/Avatar';
import { Banner } from '../components/Banner';
import { ConfirmButton } from '../components/ConfirmButton';
import { Field } from '../components/Field';
import { Loading } from '../components/Loading';
import { PageHeader } from '../components/PageHeader';
import { AVATAR_TYPES, avatarFileProblem } from '../avatar-file';
import { describeError, formErrors, type FormErrors } from '../error-messages';
import { useSession } from '../session-context';
import { formatDateTime, formatRelative } from '../time-format';
import { useLoad } from '../use-load';
import { describeUserAgent } from '../user-agent';
import { TimeText } from '../components/TimeText';

type Notice = { tone: 'error' | 'success'; text: string } | null;

function ProfileSection() {
  const session = useSession();
  const [name, setName] = useState(session.me.name);
  const [errors, setErrors] = useState<FormErrors<'name'>>({ fields: {}, banner: null });
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setSaved(false);
    if (!name.trim()) {
      setErrors({ fields: { name: 'Enter your name.' }, banner: null });
      return;
    }
    setBusy(true);
    setErrors({ fields: {}, banner: null });
    try {
      const me = await updateProfile(name.trim());
      session.setMe(me);
      setName(me.name);
      setSaved(true);
    } catch (error) {
      setErrors(formErrors(error, ['name']));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="form" onSubmit={submit} noValidate>
      {errors.banner ? <Banner tone="error">{errors.banner}</Banner> : null}
      <Field id="profile-name" label="Name" value={name} onValue={(value) => {
          setName(value);
          setSaved(false);
          setErrors((old) => ({ ...old, fields: {} }));
        }} error={errors.fields.name} autoComplete="name" maxLength={100} />
      <div class="field">
        <span class="field-label">Email</span>
        <p class="field-static">{session.me.email}</p>
      </div>
      <div class="form-actions">
        <button type="submit" class="btn btn-primary" disabled={busy || name.trim() === session.me.name}>
          {busy ? 'Saving…' : 'Save name'}
        </button>
        {saved ? (
          <span class="saved" role="status">
            Saved
          </span>
        ) : null}
      </div>
    </form>
  );
}

function AvatarSection() {
  const session = useSession();
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [busy, setBusy] = useState(false);
  const [inputKey, setInputKey] = useState(0);

  // A chosen file is previewed from a blob: address, released when it changes.
  useEffect(() => {
    if (!file) {
      setPreview(null);
      return;
    }
    const url = URL.createObjectURL(file);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [file]);

  function choose(chosen: File | null) {
    setNotice(null);
    if (!chosen) {
      setFile(null);
      setProblem(null);
      return;
    }
    const why = avatarFileProblem(chosen);
    setProblem(why);
    setFile(why ? null : chosen);
  }

  function reset() {
    setFile(null);
    setInputKey((k) => k + 1);
  }

  async function upload() {
    if (!file) return;
    setBusy(true);
    setNotice(null);
    try {
      await putAvatar(file);
      session.setMe({ ...session.me, hasAvatar: true }, true);
      reset();
      setNotice({ tone: 'success', text: 'Your picture is updated.' });
    } catch (error) {
      setProblem(describeError(error));
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    setNotice(null);
    try {
      await deleteAvatar();
      session.setMe({ ...session.me, hasAvatar: false }, true);
      setNotice({ tone: 'success', text: 'Your picture was removed.' });
    } catch (error) {
      setNotice({ tone: 'error', text: describeError(error) });
    }
  }

  const current = session.me.hasAvatar ? avatarUrl(session.avatarVersion) : null;
  return (
    <div class="avatar-editor">
      <div class="avatar-editor-preview">
        <Avatar name={session.me.name} seed={session.me.id} src={preview ?? current} size={72} />
      </div>
      <div class="avatar-editor-controls">
        {notice ? <Banner tone={notice.tone}>{notice.text}</Banner> : null}
        <div class={`field${problem ? ' field-invalid' : ''}`}>
          <label for="avatar-file">Picture</label>
          <input
            key={inputKey}
            id="avatar-file"
            type="file"
            accept={AVATAR_TYPES.join(',')}
            onChange={(event) => choose(event.currentTarget.files?.[0] ?? null)}
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? 'avatar-file-error' : 'avatar-file-hint'}
          />
          {problem ? (
            <p class="field-error" id="avatar-file-error">
              {problem}
            </p>
          ) : (
            <p class="field-hint" id="avatar-file-hint">
              PNG, JPEG or WebP, at most 1 MiB.
            </p>
          )}
        </div>
        <div class="form-actions">
          <button type="button" class="btn btn-primary" disabled={!file || busy} onClick={() => void upload()}>
            {busy ? 'Uploading…' : 'Upload picture'}
          </button>
          {file ? (
            <button type="button" class="btn btn-ghost" onClick={reset}>
              Cancel
            </button>
          ) : session.me.hasAvatar ? (
            <ConfirmButton label="Remove picture" question="Remove your picture?" confirmLabel="Remove" tone="secondary" onConfirm={remove} />
          ) : null}
        </div>
      </div>
    </div>
  );
}

/** "Chrome 156 on Linux" for a browser; the peer library by name. */
function describeSession(session: SessionView): string {
  if (session.client === 'peer') return 'Peer library (API token)';
  return session.userAgent ? describeUserAgent(session.userAgent) : 'Web browser';
}

function SessionsSection() {
  const sessions = useLoad(listSessions, []);
  const [notice, setNotice] = useState<Notice>(null);
  const list = [...(sessions.data?.sessions ?? [])].sort(
    (a, b) => Number(b.current) - Number(a.current) || b.lastSeenAt - a.lastSeenAt,
  );
  const others = list.filter((s) => !s.current).length;

  async function revoke(target: SessionView) {
    setNotice(null);
    try {
      await revokeSession(target.id);
      await sessions.reload();
      setNotice({ tone: 'success', text: 'That session is signed out.' });
    } catch (error) {
      setNotice({ tone: 'error', text: describeError(error) });
    }
  }

  async function revokeOthers() {
    setNotice(null);
    try {
      const { revoked } = await revokeOtherSessions();
      await sessions.reload();
      setNotice({
        tone: 'success',
        text: revoked === 1 ? 'Signed out 1 other session.' : `Signed out ${revoked} other sessions.`,
      });
    } catch (error) {
      setNotice({ tone: 'error', text: describeError(error) });
    }
  }

  return (
    <>
      {notice ? (
        <div class="card-body card-body-tight">
          <Banner tone={notice.tone}>{notice.text}</Banner>
        </div>
      ) : null}
      {sessions.error ? (
        <div class="card-body">
          <Banner tone="error">{describeError(sessions.error)}</Banner>
        </div>
      ) : !sessions.data ? (
        <Loading />
      ) : (
        <ul class="rows">
          {list.map((s) => (
            <li class="row session-row" key={s.id}>
              <div class="row-main">
                <div class="row-title" title={s.userAgent || undefined}>
                  {describeSession(s)}
                  {s.current ? <span class="tag tag-accent">This session</span> : null}
                </div>
                <div class="row-sub">
                  Signed in <TimeText at={s.createdAt} text={formatDateTime(s.createdAt)} /> · active <TimeText at={s.lastSeenAt} text={formatRelative(s.lastSeenAt)} />
                </div>
              </div>
              <div class="row-side">
                {s.current ? null : (
                  <ConfirmButton label="Sign out" question="Sign this session out?" confirmLabel="Sign out" size="sm" onConfirm={() => revoke(s)} />
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
      {others > 0 ? (
        <div class="card-foot">
          <ConfirmButton
            label="Sign out everywhere else"
            question={`Sign out ${others} other ${others === 1 ? 'session' : 'sessions'}?`}
            confirmLabel="Sign out others"
            tone="secondary"
            onConfirm={revokeOthers}
          />
        </div>
      ) : null}
    </>
  );
}

export function AccountScreen() {
  const session = useSession();
  return (
    <>
      <PageHeader title="Account settings" subtitle="Your profile, your picture and where you are signed in." />
      <section class="card" aria-labelledby="profile-title">
        <div class="card-head">
          <h2 id="profile-title">Profile</h2>
        </div>
        <div class="card-body">
          <AvatarSection />
        </div>
        <div class="card-body card-body-divided">
          <ProfileSection />
        </div>
      </section>
      <section class="card" aria-labelledby="sessions-title">
        <div class="card-head">
          <h2 id="sessions-title">Sessions</h2>
          <p class="muted">Browsers and peer libraries signed in to your account.</p>
        </div>
        <SessionsSection />
      </section>
      <section class="card card-quiet" aria-labelledby="signout-title">
        <div class="card-body split">
          <div>
            <h2 id="signout-title">Sign out</h2>
            <p class="muted">End this session in this browser.</p>
          </div>
          <button type="button" class="btn btn-secondary" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </section>
    </>
  );
}
