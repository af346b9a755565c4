import { useState } from 'preact/hooks';
import { avatarUrl, changeRole, leaveTeam, listMembers, memberAvatarUrl, removeMember } from '../api/endpoints';
import type { MemberView, Role, TeamView } from '../api/types';
import { Avatar } from '../components/Avatar';
import { Banner } from '../components/Banner';
import { ConfirmButton } from '../components/ConfirmButton';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { PageHeader } from '../components/PageHeader';
import { RoleBadge } from '../components/RoleBadge';
import { describeError } from '../error-messages';
import { navigate, routePath } from '../router';
import { assignableRoles, canChangeRole, canManage, canRemove, leaveLockReason, ROLE_LABELS, roleLockReason } from '../roles';
import { useSession } from '../session-context';
import { formatDate } from '../time-format';
import { useLoad } from '../use-load';
import { TimeText } from '../components/TimeText';

const ORDER: Record<Role, number> = { owner: 0, admin: 1, member: 2 };

function byRoleThenName(a: MemberView, b: MemberView): number {
  return ORDER[a.role] - ORDER[b.role] || a.name.localeCompare(b.name);
}

type Notice = { tone: 'error' | 'success'; text: string } | null;

export function MembersScreen({ team }: { team: TeamView }) {
  const session = useSession();
  const members = useLoad(() => listMembers(team.id), [team.id]);
  const [notice, setNotice] = useState<Notice>(null);
  const [pending, setPending] = useState<string | null>(null);
  const [leaveError, setLeaveError] = useState<unknown>(null);
  const actor = team.role;
  const manage = canManage(actor);

  async function setRole(member: MemberView, role: Role) {
    if (role === member.role) return;
    setPending(member.accountId);
    setNotice(null);
    try {
      const updated = await changeRole(team.id, member.accountId, role);
      const list = members.data?.members ?? [];
      members.setData({ members: list.map((m) => (m.accountId === updated.accountId ? updated : m)) });
      setNotice({ tone: 'success', text: `${updated.name} is now ${updated.role === 'member' ? 'a member' : `an ${updated.role}`}.` });
      if (member.accountId === session.me.id) await session.reloadTeams();
    } catch (error) {
      setNotice({ tone: 'error', text: describeError(error) });
    } finally {
      setPending(null);
    }
  }

  async function remove(member: MemberView) {
    setNotice(null);
    try {
      await removeMember(team.id, member.accountId);
      const list = members.data?.members ?? [];
      members.setData({ members: list.filter((m) => m.accountId !== member.accountId) });
      setNotice({ tone: 'success', text: `${member.name} was removed from ${team.name}.` });
    } catch (error) {
      setNotice({ tone: 'error', text: describeError(error) });
    }
  }

  async function leave() {
    setLeaveError(null);
    setNotice(null);
    try {
      await leaveTeam(team.id);
      await session.reloadTeams();
      navigate({ name: 'home' }, { replace: true });
    } catch (error) {
      setLeaveError(error);
    }
  }

  const list = [...(members.data?.members ?? [])].sort(byRoleThenName);
  const owners = list.filter((m) => m.role === 'owner').length;
  // The last owner is told why instead of being offered a leave the hub would refuse.
  const mustStay = members.data ? leaveLockReason(actor, owners) : null;
  return (
    <>
      <PageHeader
        title="Members"
        subtitle={
          members.data
            ? `${list.length} ${list.length === 1 ? 'person' : 'people'} in ${team.name}`
            : `People in ${team.name}`
        }
        actions={
          manage ? (
            <Link class="btn btn-primary" href={routePath({ name: 'team', teamId: team.id, section: 'invitations' })}>
              Invite people
            </Link>
          ) : null
        }
      />
      {notice ? <Banner tone={notice.tone}>{notice.text}</Banner> : null}
      {!manage ? (
        <p class="note">Only owners and admins can change roles or remove members.</p>
      ) : null}
      <section class="card" aria-label="Members">
        {members.error ? (
          <div class="card-body">
            <Banner tone="error">{describeError(members.error)}</Banner>
          </div>
        ) : !members.data ? (
          <Loading />
        ) : (
          <ul class="rows">
            {list.map((member) => {
              const isSelf = member.accountId === session.me.id;
              const editable = canChangeRole(actor, member.role);
              const roles = assignableRoles(actor);
              const locked = roleLockReason(member.role, owners);
              return (
                <li class="row member-row" key={member.accountId}>
                  <Avatar
                    name={member.name}
                    seed={member.accountId}
                    src={
                      isSelf
                        ? session.me.hasAvatar
                          ? avatarUrl(session.avatarVersion)
                          : null
                        : member.hasAvatar
                          ? memberAvatarUrl(team.id, member.accountId)
                          : null
                    }
                    size={36}
                  />
                  <div class="row-main">
                    <div class="row-title">
                      {member.name}
                      {isSelf ? <span class="tag">You</span> : null}
                    </div>
                    <div class="row-sub">
                      {member.email} · joined <TimeText at={member.joinedAt} text={formatDate(member.joinedAt)} />
                    </div>
                  </div>
                  <div class="row-side">
                    {editable ? (
                      <>
                        <label class="visually-hidden" for={`role-${member.accountId}`}>
                          Role of {member.name}
                        </label>
                        <select
                          id={`role-${member.accountId}`}
                          class="select-sm"
                          value={member.role}
                          disabled={pending === member.accountId || locked !== null}
                          title={locked ?? undefined}
                          aria-describedby={locked ? `role-lock-${member.accountId}` : undefined}
                          onChange={(event) => void setRole(member, event.currentTarget.value as Role)}
                        >
                          {roles.map((role) => (
                            <option key={role} value={role}>
                              {ROLE_LABELS[role]}
                            </option>
                          ))}
                        </select>
                        {locked ? (
                          <span class="role-lock" id={`role-lock-${member.accountId}`}>
                            {locked}
                          </span>
                        ) : null}
                      </>
                    ) : (
                      <RoleBadge role={member.role} />
                    )}
                    {canRemove(actor, member.role, isSelf) ? (
                      <ConfirmButton
                        label="Remove"
                        question={`Remove ${member.name}?`}
                        confirmLabel="Remove"
                        size="sm"
                        onConfirm={() => remove(member)}
                      />
                    ) : null}
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <section class="card card-quiet" aria-labelledby="leave-title">
        <div class="card-body split">
          <div>
            <h2 id="leave-title">Leave {team.name}</h2>
            <p class="muted">
              You lose access to the team's hosts. To come back you need a new invitation.
              {actor === 'owner' ? ' A team keeps at least one owner.' : ''}
            </p>
          </div>
          {mustStay ? (
            <p class="role-lock leave-lock">{mustStay}</p>
          ) : (
            <ConfirmButton label="Leave team" question="Leave this team?" confirmLabel="Leave" onConfirm={leave} />
          )}
        </div>
        {leaveError ? (
          <div class="card-body-after">
            <Banner tone="error">{describeError(leaveError)}</Banner>
          </div>
        ) : null}
      </section>
    </>
  );
}
