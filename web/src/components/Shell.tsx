import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { avatarUrl } from '../api/endpoints';
import type { TeamView } from '../api/types';
import { routePath, subscribe, type Route } from '../router';
import { canManage } from '../roles';
import { useSession } from '../session-context';
import { Avatar } from './Avatar';
import { Icon, type IconName } from './Icon';
import { Link } from './Link';
import { Logo } from './Logo';
import { TeamSwitcher } from './TeamSwitcher';

interface NavItem {
  route: Route;
  label: string;
  icon: IconName;
}

function navItems(team: TeamView | null): NavItem[] {
  if (team === null) return [];
  const items: NavItem[] = [
    { route: { name: 'team', teamId: team.id, section: 'start' }, label: 'Get started', icon: 'start' },
    { route: { name: 'team', teamId: team.id, section: 'members' }, label: 'Members', icon: 'members' },
  ];
  if (canManage(team.role)) {
    items.push({ route: { name: 'team', teamId: team.id, section: 'invitations' }, label: 'Invitations', icon: 'invite' });
  }
  items.push({ route: { name: 'team', teamId: team.id, section: 'hosts' }, label: 'Hosts', icon: 'hosts' });
  items.push({ route: { name: 'team', teamId: team.id, section: 'tokens' }, label: 'Access tokens', icon: 'key' });
  return items;
}

/** The signed-in layout: a sidebar (team, pages, account) and the page beside it. */
export function Shell({ route, team, children }: { route: Route; team: TeamView | null; children: ComponentChildren }) {
  const session = useSession();
  const [open, setOpen] = useState(false);
  const here = routePath(route);

  // The drawer (narrow screens) closes whenever the page changes.
  useEffect(() => subscribe(() => setOpen(false)), []);

  const link = (item: NavItem) => {
    const href = routePath(item.route);
    return (
      <li key={href}>
        <Link href={href} class="nav-link" aria-current={href === here || here.startsWith(`${href}/`) ? 'page' : undefined}>
          <Icon name={item.icon} />
          {item.label}
        </Link>
      </li>
    );
  };

  return (
    <div class="shell">
      <aside class={`sidebar${open ? ' sidebar-open' : ''}`}>
        <div class="sidebar-top">
          <Link href={routePath({ name: 'home' })} class="sidebar-brand" aria-label="Crewhost home">
            <Logo />
          </Link>
          <button
            type="button"
            class="btn btn-ghost menu-button"
            aria-expanded={open}
            aria-controls="sidebar-body"
            onClick={() => setOpen(!open)}
          >
            <Icon name={open ? 'close' : 'menu'} size={20} />
            <span class="visually-hidden">{open ? 'Close menu' : 'Open menu'}</span>
          </button>
        </div>
        <div class="sidebar-body" id="sidebar-body">
          <TeamSwitcher teams={session.teams} current={team} />
          <nav aria-label="Team pages">
            <ul class="nav">{navItems(team).map(link)}</ul>
          </nav>
          <div class="sidebar-spacer" />
          <nav aria-label="Your account">
            <ul class="nav">
              {link({ route: { name: 'createTeam' }, label: 'Create team', icon: 'plus' })}
              {link({ route: { name: 'account' }, label: 'Account settings', icon: 'account' })}
            </ul>
          </nav>
          <div class="sidebar-account">
            <Avatar
              name={session.me.name}
              seed={session.me.id}
              src={session.me.hasAvatar ? avatarUrl(session.avatarVersion) : null}
              size={32}
            />
            <div class="sidebar-account-text">
              <span class="sidebar-account-name">{session.me.name}</span>
              <span class="sidebar-account-email">{session.me.email}</span>
            </div>
            <button type="button" class="btn btn-ghost btn-icon" onClick={() => void session.signOut()} title="Sign out">
              <Icon name="signOut" />
              <span class="visually-hidden">Sign out</span>
            </button>
          </div>
        </div>
      </aside>
      {open ? <div class="drawer-backdrop" aria-hidden="true" onClick={() => setOpen(false)} /> : null}
      <main class="main" id="main">
        <div class="main-inner">{children}</div>
      </main>
    </div>
  );
}
