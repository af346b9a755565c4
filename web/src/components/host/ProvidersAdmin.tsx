/**
 * Model providers: whether each is usable and answered a test (a key is set, never shown), setting and
 * clearing a key, and custom OpenAI-compatible providers. A key stays in its input only
 * until it is sent. Members see the list read-only, with the reason.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { EVENT, type Role, type RouteResult } from '../../host/protocol';
import { providerErrorText, providerState, providerStatusText } from '../../host/provider-status';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { Loading } from '../Loading';

type ProviderView = RouteResult<'providers-v1/list'>['providers'][number];

export const READ_ONLY_REASON = 'Only admins and owners change this. Your role can look, not change.';

export function ProvidersAdmin({ connection, role }: { connection: HostConnection; role: Role }) {
  const providers = useHostLoad(connection, 'providers-v1/list', {}, [EVENT.providersChanged]);
  const canManage = role !== 'member';
  if (providers.error) return <Banner tone="error">{describeError(providers.error)}</Banner>;
  if (!providers.data) return <Loading />;
  return (
    <section class="admin-panel card card-body" aria-label="Providers">
      <h2>Providers</h2>
      {canManage ? null : <Banner tone="info">{READ_ONLY_REASON}</Banner>}
      <ul class="admin-list">
        {providers.data.providers.map((provider) => (
          <ProviderRow key={provider.id} connection={connection} provider={provider} canManage={canManage} onChanged={providers.reload} />
        ))}
      </ul>
      {canManage ? <CustomProviderForm connection={connection} onCreated={providers.reload} /> : null}
    </section>
  );
}

function ProviderRow({ connection, provider, canManage, onChanged }: { connection: HostConnection; provider: ProviderView; canManage: boolean; onChanged: () => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = (call: Promise<unknown>) => {
    setBusy(true);
    setError(null);
    call.then(
      () => {
        setBusy(false);
        onChanged();
      },
      (failure: unknown) => {
        setBusy(false);
        setError(failure);
      },
    );
  };
  const setProviderKey = (event: Event) => {
    event.preventDefault();
    const value = key.trim();
    if (!value) return;
    // The key leaves the input as it is sent: it is never shown again.
    setKey('');
    setTested(null);
    run(connection.call('providers-v1/set_key', { provider: provider.id, key: value }));
  };
  // What the last test here answered, in words; the status itself is the host's.
  const [tested, setTested] = useState<string | null>(null);
  const runTest = () => {
    setBusy(true);
    setError(null);
    connection.call('providers-v1/test', { provider: provider.id }).then(
      (answer) => {
        setBusy(false);
        setTested(answer.message);
      },
      (failure: unknown) => {
        setBusy(false);
        setError(failure);
      },
    );
  };
  const state = providerState(provider);
  const lastError = providerErrorText(provider);
  return (
    <li class="admin-row" data-provider={provider.id}>
      <div class="admin-row-head">
        <strong>{provider.name}</strong>
        <span class={`badge${state === 'ready' ? ' badge-ok' : ''}`} data-state={state}>
          {providerStatusText(provider)}
        </span>
      </div>
      {tested ? (
        <p class="admin-muted" role="status">
          {tested}
        </p>
      ) : lastError ? (
        <p class="admin-muted">{lastError}</p>
      ) : null}
      {canManage ? (
        <form class="admin-inline" onSubmit={setProviderKey}>
          <input type="password" autocomplete="off" aria-label={`${provider.name} API key`} placeholder={provider.keySet ? 'Replace the key' : 'API key'} value={key} onInput={(e) => setKey(e.currentTarget.value)} />
          <button type="submit" class="btn btn-primary btn-sm" disabled={busy || !key.trim()}>
            Save key
          </button>
          {provider.usable ? (
            <button type="button" class="btn btn-secondary btn-sm" disabled={busy} onClick={runTest}>
              Test
            </button>
          ) : null}
          {provider.keySet ? (
            <button type="button" class="btn btn-secondary btn-sm" disabled={busy} onClick={() => (setTested(null), run(connection.call('providers-v1/clear_key', { provider: provider.id })))}>
              Clear key
            </button>
          ) : null}
          {provider.kind === 'custom' ? (
            <button type="button" class="btn btn-danger btn-sm" disabled={busy} onClick={() => run(connection.call('providers-v1/delete_custom', { provider: provider.id }))}>
              Delete
            </button>
          ) : null}
        </form>
      ) : null}
      {canManage && provider.kind !== 'custom' ? <BaseUrlForm provider={provider} onSave={(baseUrl) => run(connection.call('providers-v1/update', { provider: provider.id, baseUrl }))} busy={busy} /> : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
    </li>
  );
}

/** A built-in provider's own address, or another (a proxy, a gateway); empty puts its own back. */
function BaseUrlForm({ provider, onSave, busy }: { provider: ProviderView; onSave: (baseUrl: string | null) => void; busy: boolean }) {
  const [value, setValue] = useState(provider.baseUrl);
  const save = (event: Event) => {
    event.preventDefault();
    onSave(value.trim() || null);
  };
  return (
    <details class="provider-base-url">
      <summary>Base URL (optional)</summary>
      <form class="admin-inline" onSubmit={save}>
        <input type="url" aria-label={`${provider.name} base URL`} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        <button type="submit" class="btn btn-secondary btn-sm" disabled={busy || value.trim() === provider.baseUrl}>
          Save
        </button>
      </form>
      {provider.keySet ? <p class="field-hint">The key stays only at the same address: moving to another server forgets it, so set it again after.</p> : null}
    </details>
  );
}

function CustomProviderForm({ connection, onCreated }: { connection: HostConnection; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [models, setModels] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    const list = models.split(',').map((m) => m.trim()).filter(Boolean);
    const secret = key.trim();
    setKey('');
    setError(null);
    connection.call('providers-v1/create_custom', { name: name.trim(), baseUrl: baseUrl.trim(), models: list, defaultModel: list[0] ?? null, ...(secret ? { key: secret } : {}) }).then(
      () => {
        setName('');
        setBaseUrl('');
        setModels('');
        onCreated();
      },
      setError,
    );
  };
  return (
    <form class="admin-form" onSubmit={submit} aria-label="Add an OpenAI-compatible provider">
      <h3>Add an OpenAI-compatible provider</h3>
      <label>
        Name <input type="text" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
      </label>
      <label>
        Base URL <input type="url" value={baseUrl} placeholder="https://llm.example.com/v1" onInput={(e) => setBaseUrl(e.currentTarget.value)} required />
      </label>
      <label>
        Models (comma-separated) <input type="text" value={models} onInput={(e) => setModels(e.currentTarget.value)} />
      </label>
      <label>
        API key <input type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      </label>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <button type="submit" class="btn btn-primary btn-sm">
        Add provider
      </button>
    </form>
  );
}
