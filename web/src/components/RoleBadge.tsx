import type { Role } from '../api/types';
import { ROLE_LABELS } from '../roles';

export function RoleBadge({ role }: { role: Role }) {
  return <span class={`badge badge-role-${role}`}>{ROLE_LABELS[role]}</span>;
}
