/**
 * What an invitation row says about its state: active, used up, expired or revoked, and
 * for one that was used, who used it and when (not when it would have expired).
 */

import type { InvitationView } from './api/types';
import { formatRelative } from './time-format';

export type InvitationStatus = 'active' | 'revoked' | 'usedUp' | 'expired';

export const STATUS_LABELS: Record<InvitationStatus, string> = {
  active: 'Active',
  revoked: 'Revoked',
  usedUp: 'Used up',
  expired: 'Expired',
};

export function invitationStatus(invitation: InvitationView, nowSeconds: number): InvitationStatus {
  if (invitation.revoked) return 'revoked';
  if (invitation.usable) return 'active';
  if (invitation.uses >= invitation.maxUses) return 'usedUp';
  if (invitation.expiresAt <= nowSeconds) return 'expired';
  return 'revoked';
}

function names(list: readonly string[]): string {
  if (list.length <= 1) return list[0] ?? '';
  return `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
}

/** Who used it: "used by Ada 5 minutes ago", "used by Ada and Bo, last 2 days ago". */
export function describeUses(invitation: InvitationView, nowMs: number): string | null {
  const usedBy = invitation.usedBy ?? [];
  const last = usedBy[usedBy.length - 1];
  if (!last) {
    if (invitation.uses === 0) return null;
    // Uses from before the hub recorded who: only the count is known.
    return `used ${invitation.uses} ${invitation.uses === 1 ? 'time' : 'times'}`;
  }
  const when = formatRelative(last.usedAt, nowMs);
  const unknown = invitation.uses - usedBy.length;
  const who = names([...usedBy.map((use) => use.name), ...(unknown > 0 ? [`${unknown} more`] : [])]);
  return usedBy.length === 1 && unknown <= 0 ? `used by ${who} ${when}` : `used by ${who}, last ${when}`;
}

/** The row's line after "Created … by …": state first, then the uses that matter. */
export function describeInvitation(invitation: InvitationView, nowMs: number): string {
  const status = invitationStatus(invitation, nowMs / 1000);
  const uses = describeUses(invitation, nowMs);
  const count = `${invitation.uses} of ${invitation.maxUses} ${invitation.maxUses === 1 ? 'use' : 'uses'}`;
  switch (status) {
    case 'usedUp':
      return uses ?? count;
    case 'expired':
      return [`expired ${formatRelative(invitation.expiresAt, nowMs)}`, uses].filter(Boolean).join(' · ');
    case 'revoked':
      return uses ?? 'never used';
    case 'active':
      return [`expires ${formatRelative(invitation.expiresAt, nowMs)}`, count, uses].filter(Boolean).join(' · ');
  }
}
