import { useState } from 'preact/hooks';
import { createInvitation, listInvitations, listMembers, revokeInvitation } from '../api/endpoints';
import type { InvitationCreated, InvitationView, Role, TeamView } from '../api/types';
import { Banner } from '../components/Banner';
import { ConfirmButton } from '../components/ConfirmButton';
import { CopyField } from '../components/CopyField';
import { Loading } from '../components/Loading';
import { PageHeader } from '../components/PageHeader';
import { RoleBadge } from '../components/RoleBadge';
import { describeError, formErrors, type FormErrors } from '../error-messages';
import { assignableRoles, canManage, ROLE_LABELS } from '../roles';
import { describeInvitation, invitationStatus, STATUS_LABELS } from '../invitation-state';
import { formatDate } from '../time-format';
import { useLoad } from '../use-load';
import { TimeText } from '../components/TimeText';

const DAY = 86400;
export const EXPIRY_CHOICES = [
  { seconds: DAY, label: '1 day' },
  { seconds: 7 * DAY, label: '7 days' },
  { seconds: 30 * DAY, label: '30 days' },
] as const;

type FieldName = 'role' | 'expiresInSeconds' | 'maxUses';
const FIELDS: readonly FieldName[] = ['role', 'expiresInSeconds', 'maxUses'];

function CreateForm({ team, onCreated }: { team: TeamView; onCreated: (created: InvitationCreated) => void }) {
  const roles = assignableRoles(team.role);
  const [role, setRole] = useState<Role>('member');
  const [expires, setExpires] = useState<number>(7 * DAY);
  const [maxUses, setMaxUses] = useState('1');
  const [errors, setErrors] = useState<FormErrors<FieldName>>({ fields: {}, banner: null });
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const uses = Number(maxUses);
    if (!Number.isInteger(uses) || uses < 1 || uses > 1000) {
      setErrors({ fields: { maxUses: 'Enter a whole number from 1 to 1000.' }, banner: null });
      return;
    }
    setBusy(true);
    setErrors({ fields: {}, banner: null });
    try {
      onCreated(await createInvitation(team.id, { role, expiresInSeconds: expires, maxUses: uses }));
      setMaxUses('1');
    } catch (error) {
      setErrors(formErrors(error, FIELDS));
    } finally {
      setBusy(false);
    }
  }

  const usesError = errors.fields.maxUses;
  return (
    <form class="invite-form" onSubmit={submit} noValidate>
      {errors.banner ? <Banner tone="error">{errors.banner}</Banner> : null}
      <div class="form-grid">
        <div class={`field${errors.fields.role ? ' field-invalid' : ''}`}>
          <label for="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {ROLE_LABELS[r]}
              </option>
            ))}
          </select>
          {errors.fields.role ? <p class="field-error">{errors.fields.role}</p> : null}
        </div>
        <div class={`field${errors.fields.expiresInSeconds ? ' field-invalid' : ''}`}>
          <label for="invite-expiry">Link expires after</label>
          <select id="invite-expiry" value={String(expires)} onChange={(e) => setExpires(Number(e.currentTarget.value))}>
            {EXPIRY_CHOICES.map((choice) => (
              <option key={choice.seconds} value={String(choice.seconds)}>
                {choice.label}
              </option>
            ))}
          </select>
          {errors.fields.expiresInSeconds ? <p class="field-error">{errors.fields.expiresInSeconds}</p> : null}
        </div>
        <div class={`field${usesError ? ' field-invalid' : ''}`}>
          <label for="invite-uses">Max uses</label>
          <input
            id="invite-uses"
            type="number"
            min={1}
            max={1000}
            inputMode="numeric"
            value={maxUses}
            onInput={(e) => setMaxUses(e.currentTarget.value)}
            aria-invalid={usesError ? true : undefined}
            aria-describedby={usesError ? 'invite-uses-error' : undefined}
          />
          {usesError ? (
            <p class="field-error" id="invite-uses-error">
              {usesError}
            </p>
          ) : null}
        </div>
        <div class="form-grid-action">
          <button type="submit" class="btn btn-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create link'}
          </button>
        </div>
      </div>
    </form>
  );
}

export function InvitationsScreen({ team }: { team: TeamView }) {
  if (!canManage(team.role)) {
    return (
      <>
        <PageHeader title="Invitations" />
        <Banner tone="info">Only owners and admins of {team.name} can invite people.</Banner>
      </>
    );
  }
  return <InvitationsManager team={team} />;
}

function InvitationsManager({ team }: { team: TeamView }) {
  const invitations = useLoad(() => listInvitations(team.id), [team.id]);
  const members = useLoad(() => listMembers(team.id), [team.id]);
  const [created, setCreated] = useState<InvitationCreated | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const names = new Map((members.data?.members ?? []).map((m) => [m.accountId, m.name]));
  const now = Date.now() / 1000;
  const list = [...(invitations.data?.invitations ?? [])].sort((a, b) => b.createdAt - a.createdAt);

  async function revoke(invitation: InvitationView) {
    setNotice(null);
    try {
      await revokeInvitation(team.id, invitation.id);
      if (created?.invitation.id === invitation.id) setCreated(null);
      await invitations.reload();
    } catch (error) {
      setNotice(describeError(error));
    }
  }

  return (
    <>
      <PageHeader title="Invitations" subtitle={`Invite people to ${team.name} with a link.`} />

      <section class="card" aria-labelledby="new-invite-title">
        <div class="card-body">
          <h2 id="new-invite-title">Create an invitation</h2>
          <p class="muted">Anyone with the link can join as the role you choose, until it expires or is used up.</p>
          <CreateForm
            team={team}
            onCreated={(value) => {
              setCreated(value);
              void invitations.reload();
            }}
          />
        </div>
        {created ? (
          <div class="card-body created-link">
            <Banner tone="success">
              Invitation created for the <strong>{ROLE_LABELS[created.invitation.role].toLowerCase()}</strong> role.
              Copy the link now: it is shown only once.
            </Banner>
            <CopyField id="invite-link" label="Invitation link" value={created.link} />
            <button type="button" class="btn btn-secondary btn-sm" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        ) : null}
      </section>

      <section class="card" aria-labelledby="invites-title">
        <div class="card-head">
          <h2 id="invites-title">Links</h2>
        </div>
        {notice ? (
          <div class="card-body card-body-tight">
            <Banner tone="error">{notice}</Banner>
          </div>
        ) : null}
        {invitations.error ? (
          <div class="card-body">
            <Banner tone="error">{describeError(invitations.error)}</Banner>
          </div>
        ) : !invitations.data ? (
          <Loading />
        ) : list.length === 0 ? (
          <p class="empty">No invitations yet. Links you create appear here.</p>
        ) : (
          <ul class="rows">
            {list.map((invitation) => {
              const status = invitationStatus(invitation, now);
              const by = invitation.createdBy ? names.get(invitation.createdBy) : undefined;
              return (
                <li class="row invite-row" key={invitation.id}>
                  <div class="row-main">
                    <div class="row-title">
                      <RoleBadge role={invitation.role} />
                      <span class={`status status-${status}`}>{STATUS_LABELS[status]}</span>
                    </div>
                    <div class="row-sub">
                      Created <TimeText at={invitation.createdAt} text={formatDate(invitation.createdAt)} />
                      {by ? ` by ${by}` : ''} ·{' '}
                      {describeInvitation(invitation, now * 1000)}
                    </div>
                  </div>
                  <div class="row-side">
                    {status === 'active' ? (
                      <ConfirmButton
                        label="Revoke"
                        question="Revoke this link?"
                        confirmLabel="Revoke"
                        size="sm"
                        onConfirm={() => revoke(invitation)}
                      />
                    ) : null}
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </section>
    </>
  );
}
