/**
 * The team's vault: logins, cards and contact info. Owners and admins list every item with
 * its non-secret fields, its card brand and last four and a "set" mark for each secret;
 * they add, edit (secrets as a mask: left alone they keep their value) and delete after a
 * question. A secret stays in its input only until it is sent and is never shown after.
 * Members see the items' names and kinds only, with the reason.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { EVENT, type Role } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import {
  KIND_TEXT,
  SECRET_MASK,
  VAULT_FIELDS,
  changesNothing,
  createBody,
  deleteItemQuestion,
  editForm,
  emptyForm,
  itemFacts,
  secretMarks,
  updateBody,
  withoutSecrets,
  type VaultFormValues,
  type VaultItem,
  type VaultKind,
} from '../../host/vault-form';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { Loading } from '../Loading';

const EVENTS = [EVENT.vaultChanged] as const;
const PAGE = 50;

export const VAULT_MEMBER_REASON = 'Only admins and owners see and change the vault’s items. You see their names and kinds, so you know what an agent asks for.';

export function VaultAdmin({ connection, role }: { connection: HostConnection; role: Role }) {
  return role === 'member' ? <MemberVault connection={connection} /> : <ManagedVault connection={connection} />;
}

function Pager(props: { offset: number; shown: number; total: number; next: number | null; onOffset: (offset: number) => void }) {
  if (props.offset === 0 && props.next === null) return null;
  return (
    <div class="admin-inline">
      <span class="admin-muted">
        {props.offset + 1}–{props.offset + props.shown} of {props.total}
      </span>
      <button type="button" class="btn btn-secondary btn-sm" disabled={props.offset === 0} onClick={() => props.onOffset(Math.max(0, props.offset - PAGE))}>
        Previous
      </button>
      <button type="button" class="btn btn-secondary btn-sm" disabled={props.next === null} onClick={() => props.next !== null && props.onOffset(props.next)}>
        Next
      </button>
    </div>
  );
}

function MemberVault({ connection }: { connection: HostConnection }) {
  const [offset, setOffset] = useState(0);
  const names = useHostLoad(connection, 'vault-v1/list_names', { offset, limit: PAGE }, EVENTS);
  if (names.error) return <Banner tone="error">{describeError(names.error)}</Banner>;
  if (!names.data) return <Loading />;
  const { items, total, nextOffset } = names.data;
  return (
    <section class="admin-panel card card-body" aria-label="Vault">
      <h2>Vault</h2>
      <Banner tone="info">{VAULT_MEMBER_REASON}</Banner>
      {items.length === 0 ? <p class="empty">The vault is empty.</p> : null}
      <ul class="admin-list" aria-label="Vault items">
        {items.map((item) => (
          <li key={item.id} class="admin-row" data-vault-item={item.id}>
            <div class="admin-row-head">
              <strong>{item.name}</strong>
              <span class="badge">{KIND_TEXT[item.kind]}</span>
            </div>
          </li>
        ))}
      </ul>
      <Pager offset={offset} shown={items.length} total={total} next={nextOffset} onOffset={setOffset} />
    </section>
  );
}

function ManagedVault({ connection }: { connection: HostConnection }) {
  const [offset, setOffset] = useState(0);
  const list = useHostLoad(connection, 'vault-v1/list', { offset, limit: PAGE }, EVENTS);
  const [adding, setAdding] = useState<VaultKind | null>(null);
  const [newKind, setNewKind] = useState<VaultKind>('login');
  if (list.error) return <Banner tone="error">{describeError(list.error)}</Banner>;
  if (!list.data) return <Loading />;
  const { items, total, nextOffset } = list.data;
  return (
    <section class="admin-panel card card-body" aria-label="Vault">
      <h2>Vault</h2>
      <p class="muted">Agents fill these into pages without seeing a secret. A saved secret is never shown again.</p>
      {adding ? (
        <ItemForm connection={connection} kind={adding} item={null} onDone={() => setAdding(null)} onSaved={list.reload} />
      ) : (
        <div class="admin-inline vault-add">
          <select aria-label="Kind of the new item" value={newKind} onChange={(e) => setNewKind(e.currentTarget.value as VaultKind)}>
            {(Object.keys(KIND_TEXT) as VaultKind[]).map((kind) => (
              <option key={kind} value={kind}>
                {KIND_TEXT[kind]}
              </option>
            ))}
          </select>
          <button type="button" class="btn btn-primary btn-sm" onClick={() => setAdding(newKind)}>
            Add to the vault
          </button>
        </div>
      )}
      {items.length === 0 ? <p class="empty">The vault is empty.</p> : null}
      <ul class="admin-list" aria-label="Vault items">
        {items.map((item) => (
          <ItemRow key={item.id} connection={connection} item={item} onChanged={list.reload} />
        ))}
      </ul>
      <Pager offset={offset} shown={items.length} total={total} next={nextOffset} onOffset={setOffset} />
    </section>
  );
}

function ItemRow({ connection, item, onChanged }: { connection: HostConnection; item: VaultItem; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const marks = secretMarks(item);
  const remove = async () => {
    setError(null);
    try {
      await connection.call('vault-v1/delete', { itemId: item.id });
      onChanged();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <li class="admin-row vault-row" data-vault-item={item.id}>
      <div class="admin-row-head">
        <strong>{item.name}</strong>
        <span class="badge">{KIND_TEXT[item.kind]}</span>
        {marks.map((mark) => (
          <span key={mark} class="badge badge-ok">
            {mark}
          </span>
        ))}
      </div>
      {itemFacts(item).map((fact) => (
        <p key={fact} class="admin-muted vault-fact">
          {fact}
        </p>
      ))}
      {editing ? (
        <ItemForm connection={connection} kind={item.kind} item={item} onDone={() => setEditing(false)} onSaved={onChanged} />
      ) : (
        <div class="admin-inline">
          <button type="button" class="btn btn-secondary btn-sm" onClick={() => setEditing(true)}>
            Edit
          </button>
          <ConfirmButton label="Delete" question={deleteItemQuestion(item.name)} confirmLabel="Delete" size="sm" onConfirm={remove} />
        </div>
      )}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
    </li>
  );
}

function ItemForm(props: { connection: HostConnection; kind: VaultKind; item: VaultItem | null; onDone: () => void; onSaved: () => void }) {
  const { connection, kind, item } = props;
  const [values, setValues] = useState<VaultFormValues>(() => (item ? editForm(item) : emptyForm(kind)));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (name: keyof VaultFormValues, value: string) => setValues((old) => ({ ...old, [name]: value }));

  const submit = async (event: Event) => {
    event.preventDefault();
    const body = item ? updateBody(item, values) : createBody(kind, values);
    // The secrets leave the inputs as they are sent: they are never shown again.
    setValues(withoutSecrets(kind, values, item));
    if ('itemId' in body && changesNothing(body)) {
      props.onDone();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      if ('item' in body) await connection.call('vault-v1/create', body);
      else await connection.call('vault-v1/update', body);
      props.onSaved();
      props.onDone();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const title = item ? `Edit ${item.name}` : `New ${KIND_TEXT[kind].toLowerCase()}`;
  return (
    <form class="admin-form vault-form" aria-label={title} onSubmit={(event) => void submit(event)}>
      <h3>{title}</h3>
      {VAULT_FIELDS[kind].map((field) => {
        const value = values[field.name] ?? '';
        return (
          <label key={field.name}>
            {field.label}
            {field.multiline ? (
              <textarea rows={field.name === 'sites' ? 2 : 3} value={value} onInput={(e) => set(field.name, e.currentTarget.value)} />
            ) : (
              <input
                type={field.secret ? 'password' : 'text'}
                autoComplete={field.secret ? 'new-password' : 'off'}
                value={value}
                required={field.name === 'name'}
                // A mask is replaced whole, never typed into.
                onFocus={(e) => field.secret && e.currentTarget.value === SECRET_MASK && e.currentTarget.select()}
                onInput={(e) => set(field.name, e.currentTarget.value)}
              />
            )}
            {field.hint ? <span class="admin-muted">{field.hint}</span> : null}
            {field.secret && value === SECRET_MASK ? <span class="admin-muted">Saved. Leave it to keep it, empty it to remove it.</span> : null}
          </label>
        );
      })}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="admin-inline">
        <button type="submit" class="btn btn-primary btn-sm" disabled={busy}>
          {item ? 'Save' : 'Add'}
        </button>
        <button type="button" class="btn btn-ghost btn-sm" disabled={busy} onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
