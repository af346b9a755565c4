/**
 * How the team's agents search the web (`web-search-v1`): the engine, a SearXNG
 * instance's address, Google's engine id and the key of an engine that needs one. A key
 * stays in its input only until it is sent and is never shown back, only whether one is
 * set; clearing it moves searches back to DuckDuckGo, the engine that needs none.
 * Members see the settings read-only, with the reason.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import type { Role } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { ENGINES, engineName, keyKept, needsKey, setBody, startForm, type Engine, type SetWebSearchArgs, type WebSearchForm, type WebSearchView } from '../../host/web-search-form';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { Loading } from '../Loading';
import { READ_ONLY_REASON } from './ProvidersAdmin';

export function WebSearchAdmin({ connection, role }: { connection: HostConnection; role: Role }) {
  const settings = useHostLoad(connection, 'web-search-v1/get', {}, []);
  // Outside the form, which starts again from each answer the host gives.
  const [saved, setSaved] = useState(false);
  if (settings.error) return <Banner tone="error">{describeError(settings.error)}</Banner>;
  if (!settings.data) return <Loading />;
  const current = settings.data;
  return (
    <section class="admin-panel card card-body" aria-label="Web search">
      <h2>Web search</h2>
      <p class="muted">The engine the agents ask when they search the web.</p>
      {role === 'member' ? (
        <>
          <Banner tone="info">{READ_ONLY_REASON}</Banner>
          <p>
            Engine: <strong data-engine={current.engine}>{engineName(current.engine)}</strong>
            {needsKey(current.engine) ? <span class="admin-muted"> · {current.keySet ? 'Key set' : 'No key'}</span> : null}
          </p>
        </>
      ) : (
        <SearchForm
          key={JSON.stringify(current)}
          connection={connection}
          current={current}
          saved={saved}
          onSaved={(done) => {
            setSaved(done);
            if (done) settings.reload();
          }}
        />
      )}
    </section>
  );
}

function SearchForm(props: { connection: HostConnection; current: WebSearchView; saved: boolean; onSaved: (saved: boolean) => void }) {
  const { connection, current, saved, onSaved } = props;
  const [form, setForm] = useState<WebSearchForm>(() => startForm(current));
  const [error, setError] = useState<unknown>(null);
  const set = (change: Partial<WebSearchForm>) => {
    onSaved(false);
    setForm((old) => ({ ...old, ...change }));
  };
  const send = async (body: SetWebSearchArgs) => {
    setError(null);
    onSaved(false);
    try {
      await connection.call('web-search-v1/set', body);
      onSaved(true);
    } catch (failure) {
      setError(failure);
    }
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const body = setBody(current, form);
    // The key leaves its input as it is sent: it is never shown again.
    setForm((old) => ({ ...old, key: '' }));
    void send(body);
  };
  const kept = keyKept(current, form);
  const about = ENGINES.find((e) => e.id === form.engine);
  return (
    <form class="admin-form" aria-label="Web search settings" onSubmit={submit}>
      <label>
        Engine
        <select aria-label="Engine" value={form.engine} onChange={(e) => set({ engine: e.currentTarget.value as Engine })}>
          {ENGINES.map((engine) => (
            <option key={engine.id} value={engine.id}>
              {engine.name}
            </option>
          ))}
        </select>
        {about ? <span class="admin-muted">{about.needs}</span> : null}
      </label>
      {form.engine === 'searxng' ? (
        <label>
          Instance address
          <input type="url" value={form.baseUrl} placeholder="https://searx.example" onInput={(e) => set({ baseUrl: e.currentTarget.value })} required />
        </label>
      ) : null}
      {form.engine === 'google' ? (
        <label>
          Search engine id (cx)
          <input type="text" value={form.engineId} onInput={(e) => set({ engineId: e.currentTarget.value })} required />
        </label>
      ) : null}
      {needsKey(form.engine) ? (
        <label>
          {engineName(form.engine)} API key
          <input
            type="password"
            aria-label={`${engineName(form.engine)} API key`}
            autoComplete="off"
            value={form.key}
            placeholder={kept ? 'Key set: leave empty to keep it' : 'API key'}
            onInput={(e) => set({ key: e.currentTarget.value })}
            required={!kept}
          />
          <span class="admin-muted" data-key-set={kept}>
            {kept ? 'Key set' : 'No key'}
          </span>
        </label>
      ) : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      {saved ? <Banner tone="success">Saved.</Banner> : null}
      <div class="admin-inline">
        <button type="submit" class="btn btn-primary btn-sm">
          Save
        </button>
        {current.keySet ? (
          <ConfirmButton
            label="Clear key"
            question={`Clear the ${engineName(current.engine)} key? Searches go back to DuckDuckGo.`}
            confirmLabel="Clear key"
            tone="secondary"
            size="sm"
            onConfirm={() => send({ engine: 'duckduckgo' })}
          />
        ) : null}
      </div>
    </form>
  );
}
