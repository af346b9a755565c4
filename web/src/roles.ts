/**
 * What a member of a team may do to another, as the hub enforces it (services/teams.py):
 * admins and owners manage members; only an owner changes, removes or makes an owner.
 * The UI hides what would be refused; the hub still has the last word.
 */

import type { Role } from './api/types';

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };
export const ROLES: readonly Role[] = ['member', 'admin', 'owner'];

export const ROLE_LABELS: Record<Role, string> = {
  owner: 'Owner',
  admin: 'Admin',
  member: 'Member',
};

export function atLeast(role: Role, least: Role): boolean {
  return RANK[role] >= RANK[least];
}

/** Admins and owners manage members and invitations. */
export function canManage(actor: Role): boolean {
  return atLeast(actor, 'admin');
}

/** The roles `actor` may give (to a member, or in an invitation). */
export function assignableRoles(actor: Role): Role[] {
  if (actor === 'owner') return ['member', 'admin', 'owner'];
  if (actor === 'admin') return ['member', 'admin'];
  return [];
}

export function canChangeRole(actor: Role, target: Role): boolean {
  return canManage(actor) && (actor === 'owner' || target !== 'owner');
}

/** Removing oneself is "leave team", offered separately. */
export function canRemove(actor: Role, target: Role, isSelf: boolean): boolean {
  return !isSelf && canManage(actor) && (actor === 'owner' || target !== 'owner');
}

export const SOLE_OWNER_REASON = 'A team needs an owner';

/**
 * Why `target`'s role cannot change right now, or null if it can: the hub refuses to take
 * the owner role from a team's only owner.
 */
export function roleLockReason(target: Role, owners: number): string | null {
  return target === 'owner' && owners <= 1 ? SOLE_OWNER_REASON : null;
}

export const SOLE_OWNER_LEAVE_REASON = 'A team needs an owner. Make someone else an owner first.';

/**
 * Why `actor` cannot leave the team right now, or null if they can: the hub refuses to let
 * a team's only owner go.
 */
export function leaveLockReason(actor: Role, owners: number): string | null {
  return actor === 'owner' && owners <= 1 ? SOLE_OWNER_LEAVE_REASON : null;
}
