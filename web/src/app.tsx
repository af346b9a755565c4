/**
 * The app: which screen the address asks for, and who is signed in.
 *
 * The pages before sign-in (setup, sign-in, sign-up, join) render on their own; the others
 * render inside the shell once the account and its teams are loaded. A 401 from any call
 * that needs a session drops everything and shows sign-in.
 */

import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { onSignInNeeded } from './api/client';
import { getMe, listTeams, signOut } from './api/endpoints';
import type { AccountView, TeamView } from './api/types';
import { AuthLayout } from './components/AuthLayout';
import { Banner } from './components/Banner';
import { Loading } from './components/Loading';
import { Shell } from './components/Shell';
import { describeError } from './error-messages';
import { closePhoneMenuOnEscape } from './phone-menu';
import { navigate, useRoute, type Route, type TeamSection } from './router';
import { AccountScreen } from './screens/AccountScreen';
import { CreateTeamScreen } from './screens/CreateTeamScreen';
import { NoTeamScreen, RemovedFromTeamScreen, TeamMissingScreen } from './screens/EmptyStates';
import { GetStartedScreen } from './screens/GetStartedScreen';
import { HostScreen } from './screens/HostScreen';
import { HostsScreen } from './screens/HostsScreen';
import { AccessTokensScreen } from './screens/AccessTokensScreen';
import { InvitationsScreen } from './screens/InvitationsScreen';
import { JoinScreen } from './screens/JoinScreen';
import { MembersScreen } from './screens/MembersScreen';
import { NotFoundScreen } from './screens/NotFoundScreen';
import { SetupScreen } from './screens/SetupScreen';
import { SignInScreen } from './screens/SignInScreen';
import { SignUpScreen } from './screens/SignUpScreen';
import { SessionContext, type AppSession } from './session-context';
import { announceSignOut, watchSession } from './session-watch';
import { allowedSection, removedTeams, type RemovedTeam } from './team-changes';
import { readLastTeam, rememberLastTeam } from './ui-prefs';

type SessionState =
  | { status: 'unknown' }
  | { status: 'loading' }
  | { status: 'failed'; error: unknown }
  | { status: 'signedOut' }
  | { status: 'signedIn'; me: AccountView; teams: TeamView[]; avatarVersion: number; removed?: RemovedTeam[] };

const PUBLIC_ROUTES: ReadonlySet<Route['name']> = new Set(['setup', 'signin', 'signup', 'join', 'notFound']);

/** The team to open at /app/: the one last looked at, if still a member, else the first. */
function homeTeam(teams: TeamView[]): TeamView | null {
  const last = readLastTeam();
  return teams.find((team) => team.id === last) ?? teams[0] ?? null;
}

const SECTION_TITLES: Record<TeamSection, string> = {
  start: 'Get started',
  members: 'Members',
  invitations: 'Invitations',
  hosts: 'Hosts',
  tokens: 'Access tokens',
};

const TITLES: Record<Route['name'], string> = {
  home: 'Crewhost',
  setup: 'Set up',
  signin: 'Sign in',
  signup: 'Create an account',
  join: 'Join a team',
  createTeam: 'Create team',
  team: 'Team',
  host: 'Host',
  account: 'Account settings',
  notFound: 'Page not found',
};

export function App() {
  const route = useRoute();
  const [state, setState] = useState<SessionState>({ status: 'unknown' });
  // Set by "Sign out" so the sign-in page can say so; cleared by the next sign-in.
  const [signedOutByYou, setSignedOutByYou] = useState(false);
  const isPublic = PUBLIC_ROUTES.has(route.name);

  useEffect(() => closePhoneMenuOnEscape(), []);

  // A 401 on any call that needs a session: forget everything, show sign-in.
  useEffect(
    () =>
      onSignInNeeded(() => {
        setState({ status: 'signedOut' });
        navigate({ name: 'signin', next: null }, { replace: true });
      }),
    [],
  );

  /**
   * The hub changed this account's teams or roles (a host ended a connection for it, or the
   * tab came back into focus): load them again; a team gone from them was a removal.
   */
  const accessChanged = useCallback(async () => {
    let teams: TeamView[];
    try {
      teams = (await listTeams()).teams;
    } catch {
      return; // a 401 has sent us to sign-in; anything else, the next change will retry
    }
    setState((old) =>
      old.status === 'signedIn' ? { ...old, teams, removed: removedTeams(old.teams, teams, old.removed ?? []) } : old,
    );
  }, []);

  // Another tab signed out, or the session was revoked while this tab was in the background;
  // back in focus, the teams and roles are loaded again too.
  const isSignedIn = state.status === 'signedIn';
  useEffect(() => {
    if (!isSignedIn) return undefined;
    return watchSession(
      () => {
        setState({ status: 'signedOut' });
        navigate({ name: 'signin', next: null }, { replace: true });
      },
      () => void accessChanged(),
    );
  }, [isSignedIn, accessChanged]);

  const load = useCallback(async () => {
    setState({ status: 'loading' });
    try {
      const [me, teams] = await Promise.all([getMe(), listTeams()]);
      setState({ status: 'signedIn', me, teams: teams.teams, avatarVersion: Date.now() });
    } catch (error) {
      // A 401 has already sent us to sign-in.
      setState((old) => (old.status === 'signedOut' ? old : { status: 'failed', error }));
    }
  }, []);

  useEffect(() => {
    if (!isPublic && (state.status === 'unknown' || state.status === 'signedOut')) void load();
  }, [isPublic, state.status, load]);

  /** After sign-in go to `next` (or home); after sign-up, to the new account's Get started. */
  const signedIn = useCallback(
    async (me: AccountView, next: string | null, { isNew = false }: { isNew?: boolean } = {}) => {
      setSignedOutByYou(false);
      let teams: TeamView[] = [];
      try {
        teams = (await listTeams()).teams;
        setState({ status: 'signedIn', me, teams, avatarVersion: Date.now() });
      } catch {
        setState({ status: 'unknown' });
      }
      const team = isNew ? homeTeam(teams) : null;
      if (team) {
        rememberLastTeam(team.id);
        navigate({ name: 'team', teamId: team.id, section: 'start' }, { replace: true });
      } else {
        navigate(next ?? { name: 'home' }, { replace: true });
      }
    },
    [],
  );

  const session = useMemo<AppSession | null>(() => {
    if (state.status !== 'signedIn') return null;
    return {
      me: state.me,
      teams: state.teams,
      avatarVersion: state.avatarVersion,
      setMe: (me, avatarChanged = false) =>
        setState((old) =>
          old.status === 'signedIn'
            ? { ...old, me, avatarVersion: avatarChanged ? old.avatarVersion + 1 : old.avatarVersion }
            : old,
        ),
      reloadTeams: async () => {
        const { teams } = await listTeams();
        setState((old) => (old.status === 'signedIn' ? { ...old, teams } : old));
        return teams;
      },
      accessChanged,
      signOut: async () => {
        await signOut().catch(() => undefined);
        announceSignOut();
        setSignedOutByYou(true);
        setState({ status: 'signedOut' });
        navigate({ name: 'signin', next: null }, { replace: true });
      },
    };
  }, [state, accessChanged]);

  const team =
    (route.name === 'team' || route.name === 'host') && session
      ? (session.teams.find((t) => t.id === route.teamId) ?? null)
      : null;

  useEffect(() => {
    if (team) rememberLastTeam(team.id);
  }, [team?.id]);

  // A new role keeps the page open while it allows it; otherwise the team's members show.
  useEffect(() => {
    if (route.name !== 'team' || !team) return;
    const section = allowedSection(route.section, team.role);
    if (section !== route.section) navigate({ ...route, section }, { replace: true });
  }, [route, team?.role]);

  // /app/ opens a team when there is one.
  useEffect(() => {
    if (route.name !== 'home' || !session) return;
    const target = homeTeam(session.teams);
    if (target) navigate({ name: 'team', teamId: target.id, section: 'members' }, { replace: true });
  }, [route, session]);

  useEffect(() => {
    const page = route.name === 'team' && team ? `${team.name} · ${SECTION_TITLES[route.section]}` : TITLES[route.name];
    document.title = page === 'Crewhost' ? page : `${page} · Crewhost`;
  }, [route, team?.name]);

  switch (route.name) {
    case 'setup':
      return <SetupScreen onSignedIn={(me) => void signedIn(me, null, { isNew: true })} />;
    case 'signin':
      return <SignInScreen signedOut={signedOutByYou} onSignedIn={(me) => void signedIn(me, route.next)} />;
    case 'signup':
      return <SignUpScreen onSignedIn={(me) => void signedIn(me, null, { isNew: true })} />;
    case 'join':
      return (
        <JoinScreen
          code={route.code}
          onSignedIn={(me) => void signedIn(me, null, { isNew: true })}
          onJoined={(joined) => {
            rememberLastTeam(joined.id);
            setState({ status: 'unknown' });
            navigate({ name: 'team', teamId: joined.id, section: 'start' }, { replace: true });
          }}
        />
      );
    case 'notFound':
      return <NotFoundScreen />;
  }

  if (state.status === 'failed') {
    return (
      <AuthLayout title="Crewhost is not answering">
        <Banner tone="error">{describeError(state.error)}</Banner>
        <button type="button" class="btn btn-primary btn-block" onClick={() => void load()}>
          Try again
        </button>
      </AuthLayout>
    );
  }
  if (!session) {
    return (
      <div class="app-loading">
        <Loading />
      </div>
    );
  }

  let page;
  if (route.name === 'account') page = <AccountScreen />;
  else if (route.name === 'createTeam') page = <CreateTeamScreen />;
  else if (route.name === 'home') page = session.teams.length === 0 ? <NoTeamScreen /> : <Loading />;
  else if ((route.name === 'team' || route.name === 'host') && team === null) {
    const removed = state.status === 'signedIn' ? state.removed?.find((r) => r.id === route.teamId) : undefined;
    page = removed ? <RemovedFromTeamScreen teamName={removed.name} /> : <TeamMissingScreen />;
  }
  else if (route.name === 'host' && team !== null) page = <HostScreen key={`${team.id}/${route.hostId}`} team={team} hostId={route.hostId} opening={route.section} openingChat={{ agentId: route.agentId ?? null, threadId: route.threadId ?? null }} />;
  else if (route.name === 'team' && team !== null) {
    if (route.section === 'start') page = <GetStartedScreen key={team.id} team={team} />;
    else if (route.section === 'members') page = <MembersScreen key={team.id} team={team} />;
    else if (route.section === 'invitations') page = <InvitationsScreen key={team.id} team={team} />;
    else if (route.section === 'tokens') page = <AccessTokensScreen key={team.id} team={team} />;
    else page = <HostsScreen key={team.id} team={team} />;
  }

  return (
    <SessionContext.Provider value={session}>
      <Shell route={route} team={team ?? (route.name === 'team' || route.name === 'host' ? null : homeTeam(session.teams))}>
        {page}
      </Shell>
    </SessionContext.Provider>
  );
}
