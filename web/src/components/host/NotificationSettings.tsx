/**
 * The host screen's Notifications section: each member's email choices
 * (`notifications-v1/get_preferences`: where mail goes and, per kind, off, immediately or
 * an hourly digest), and for owners the team's mail server (`mail-server-v1`) with a test
 * mail. The mail server's password stays in its input only until it is sent and is never
 * shown back, only whether one is set.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { CHOICE_TEXT, KIND_TEXT, preferencesBody, type EmailChoice, type MailServerState, type Preferences, type SetMailServerArgs } from '../../host/notifications';
import type { Role } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { Loading } from '../Loading';

const KINDS = [
  ['approval', 'approval'],
  ['question', 'question'],
  ['runFinished', 'runFinished'],
  ['runFailed', 'runFailed'],
] as const;

export function NotificationSettings({ connection, role, mailServed }: { connection: HostConnection; role: Role; mailServed: boolean }) {
  return (
    <>
      <PreferencesForm connection={connection} />
      {role === 'owner' && mailServed ? <MailServerForm connection={connection} /> : null}
    </>
  );
}

function PreferencesForm({ connection }: { connection: HostConnection }) {
  const loaded = useHostLoad(connection, 'notifications-v1/get_preferences', {}, []);
  if (loaded.error) return <Banner tone="error">{describeError(loaded.error)}</Banner>;
  if (!loaded.data) return <Loading />;
  return <PreferencesFields key={JSON.stringify(loaded.data)} connection={connection} current={loaded.data} />;
}

function PreferencesFields({ connection, current }: { connection: HostConnection; current: Preferences }) {
  const [form, setForm] = useState<Preferences>(current);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const set = (change: Partial<Preferences>) => {
    setSaved(false);
    setForm((old) => ({ ...old, ...change }));
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      setForm(await connection.call('notifications-v1/set_preferences', preferencesBody(form)));
      setSaved(true);
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section class="admin-panel card card-body" aria-label="Notification preferences">
      <h2>Notifications</h2>
      <p class="muted">The bell above shows what waits for you on this host. Choose what also comes by email.</p>
      <form class="admin-form" aria-label="Email notifications" onSubmit={(e) => void submit(e)}>
        <label>
          Email address
          <input type="email" value={form.email ?? ''} placeholder="you@example.com" onInput={(e) => set({ email: e.currentTarget.value })} />
          <span class="admin-muted">Leave empty for no email.</span>
        </label>
        {KINDS.map(([key, kind]) => (
          <label key={key}>
            {KIND_TEXT[kind]}
            <select aria-label={KIND_TEXT[kind]} value={form[key]} onChange={(e) => set({ [key]: e.currentTarget.value as EmailChoice })}>
              {(Object.keys(CHOICE_TEXT) as EmailChoice[]).map((choice) => (
                <option key={choice} value={choice}>
                  {CHOICE_TEXT[choice]}
                </option>
              ))}
            </select>
          </label>
        ))}
        {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
        {saved ? <Banner tone="success">Saved.</Banner> : null}
        <div class="admin-inline">
          <button type="submit" class="btn btn-primary btn-sm">
            Save
          </button>
        </div>
      </form>
    </section>
  );
}

interface MailForm {
  host: string;
  port: string;
  tlsMode: SetMailServerArgs['tlsMode'];
  username: string;
  password: string;
  // The saved password goes with the save (a relay that asks none, on another host).
  removePassword: boolean;
  fromAddress: string;
}

function startMailForm(state: MailServerState): MailForm {
  const server = state.server;
  return {
    host: server?.host ?? '',
    port: String(server?.port ?? 587),
    tlsMode: server?.tlsMode ?? 'starttls',
    username: server?.username ?? '',
    password: '',
    removePassword: false,
    fromAddress: server?.fromAddress ?? '',
  };
}

function MailServerForm({ connection }: { connection: HostConnection }) {
  const loaded = useHostLoad(connection, 'mail-server-v1/get', {}, []);
  if (loaded.error) return <Banner tone="error">{describeError(loaded.error)}</Banner>;
  if (!loaded.data) return <Loading />;
  return <MailServerFields key={JSON.stringify(loaded.data)} connection={connection} current={loaded.data} onSaved={loaded.reload} />;
}

function MailServerFields({ connection, current, onSaved }: { connection: HostConnection; current: MailServerState; onSaved: () => void }) {
  const [form, setForm] = useState<MailForm>(() => startMailForm(current));
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState<string | null>(null);
  const [testTo, setTestTo] = useState('');
  const passwordSet = current.server?.passwordSet ?? false;
  const set = (change: Partial<MailForm>) => {
    setNote(null);
    setForm((old) => ({ ...old, ...change }));
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const password = form.password;
    // The password leaves its input as it is sent: it is never shown again.
    setForm((old) => ({ ...old, password: '' }));
    try {
      await connection.call('mail-server-v1/set', {
        host: form.host.trim(),
        port: Number(form.port),
        tlsMode: form.tlsMode,
        username: form.username.trim() || null,
        password: password === '' ? null : password,
        keepPassword: password === '' && passwordSet && !form.removePassword,
        fromAddress: form.fromAddress.trim(),
      });
      setNote('Saved.');
      onSaved();
    } catch (failure) {
      setError(failure);
    }
  };
  const sendTest = async () => {
    setError(null);
    setNote(null);
    try {
      await connection.call('mail-server-v1/send_test', { to: testTo.trim() });
      setNote(`A test mail went to ${testTo.trim()}.`);
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section class="admin-panel card card-body" aria-label="Email server">
      <h2>Email server</h2>
      <p class="muted">The mail server this team's email notifications go out through. Only owners see and change it.</p>
      <form class="admin-form" aria-label="Mail server settings" onSubmit={(e) => void submit(e)}>
        <label>
          Server
          <input type="text" value={form.host} placeholder="smtp.example.com" onInput={(e) => set({ host: e.currentTarget.value })} required />
        </label>
        <label>
          Port
          <input type="number" min={1} max={65535} value={form.port} onInput={(e) => set({ port: e.currentTarget.value })} required />
        </label>
        <label>
          Security
          <select aria-label="Security" value={form.tlsMode} onChange={(e) => set({ tlsMode: e.currentTarget.value as MailForm['tlsMode'] })}>
            <option value="starttls">STARTTLS (usually port 587)</option>
            <option value="tls">TLS (usually port 465)</option>
            <option value="none">None (a relay on your own network)</option>
          </select>
        </label>
        <label>
          User name
          <input type="text" autoComplete="off" value={form.username} onInput={(e) => set({ username: e.currentTarget.value })} />
        </label>
        <label>
          Password
          <input
            type="password"
            aria-label="Mail server password"
            autoComplete="off"
            value={form.password}
            placeholder={passwordSet ? 'Password set: leave empty to keep it' : 'Password'}
            onInput={(e) => set({ password: e.currentTarget.value })}
          />
          <span class="admin-muted" data-password-set={passwordSet}>
            {passwordSet ? 'Password set' : 'No password'}
          </span>
        </label>
        {passwordSet && (
          <label class="admin-check">
            <input type="checkbox" checked={form.removePassword} onChange={(e) => set({ removePassword: e.currentTarget.checked })} />
            Remove the saved password
          </label>
        )}
        <label>
          From address
          <input type="email" value={form.fromAddress} placeholder="crewhost@example.com" onInput={(e) => set({ fromAddress: e.currentTarget.value })} required />
        </label>
        <div class="admin-inline">
          <button type="submit" class="btn btn-primary btn-sm">
            Save
          </button>
        </div>
      </form>
      {current.server ? (
        <div class="admin-inline">
          <input type="email" aria-label="Send a test mail to" placeholder="you@example.com" value={testTo} onInput={(e) => setTestTo(e.currentTarget.value)} />
          <button type="button" class="btn btn-secondary btn-sm" disabled={testTo.trim() === ''} onClick={() => void sendTest()}>
            Send a test mail
          </button>
        </div>
      ) : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      {note ? <Banner tone="success">{note}</Banner> : null}
    </section>
  );
}
