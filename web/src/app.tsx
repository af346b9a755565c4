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
import { navigate, useRoute, type Route } from './router';
import { AccountScreen } from './screens/AccountScreen';
import { CreateTeamScreen } from './screens/CreateTeamScreen';
import { NoTeamScreen, TeamMissingScreen } from './screens/EmptyStates';
import { HostScreen } from './screens/HostScreen';
import { HostsScreen } from './screens/HostsScreen';
import { InvitationsScreen } from './screens/InvitationsScreen';
import { JoinScreen } from './screens/JoinScreen';
import { MembersScreen } from './screens/MembersScreen';
import { NotFoundScreen } from './screens/NotFoundScreen';
import { SetupScreen } from './screens/SetupScreen';
import { SignInScreen } from './screens/SignInScreen';
import { SignUpScreen } from './screens/SignUpScreen';
import { SessionContext, type AppSession } from './session-context';
import { announceSignOut, watchSession } from './session-watch';
import { readLastTeam, rememberLastTeam } from './ui-prefs';

type SessionState =
  | { status: 'unknown' }
  | { status: 'loading' }
  | { status: 'failed'; error: unknown }
  | { status: 'signedOut' }
  | { status: 'signedIn'; me: AccountView; teams: TeamView[]; avatarVersion: number };

const PUBLIC_ROUTES: ReadonlySet<Route['name']> = new Set(['setup', 'signin', 'signup', 'join', 'notFound']);

/** The team to open at /app/: the one last looked at, if still a member, else the first. */
function homeTeam(teams: TeamView[]): TeamView | null {
  const last = readLastTeam();
  return teams.find((team) => team.id === last) ?? teams[0] ?? null;
}

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
  const isPublic = PUBLIC_ROUTES.has(route.name);

  // A 401 on any call that needs a session: forget everything, show sign-in.
  useEffect(
    () =>
      onSignInNeeded(() => {
        setState({ status: 'signedOut' });
        navigate({ name: 'signin', next: null }, { replace: true });
      }),
    [],
  );

  // Another tab signed out, or the session was revoked while this tab was in the background.
  const isSignedIn = state.status === 'signedIn';
  useEffect(() => {
    if (!isSignedIn) return undefined;
    return watchSession(() => {
      setState({ status: 'signedOut' });
      navigate({ name: 'signin', next: null }, { replace: true });
    });
  }, [isSignedIn]);

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

  const signedIn = useCallback(
    async (me: AccountView, next: string | null) => {
      try {
        const teams = await listTeams();
        setState({ status: 'signedIn', me, teams: teams.teams, avatarVersion: Date.now() });
      } catch {
        setState({ status: 'unknown' });
      }
      navigate(next ?? { name: 'home' }, { replace: true });
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
      signOut: async () => {
        await signOut().catch(() => undefined);
        announceSignOut();
        setState({ status: 'signedOut' });
        navigate({ name: 'signin', next: null }, { replace: true });
      },
    };
  }, [state]);

  const team =
    (route.name === 'team' || route.name === 'host') && session
      ? (session.teams.find((t) => t.id === route.teamId) ?? null)
      : null;

  useEffect(() => {
    if (team) rememberLastTeam(team.id);
  }, [team?.id]);

  // /app/ opens a team when there is one.
  useEffect(() => {
    if (route.name !== 'home' || !session) return;
    const target = homeTeam(session.teams);
    if (target) navigate({ name: 'team', teamId: target.id, section: 'members' }, { replace: true });
  }, [route, session]);

  useEffect(() => {
    const page = route.name === 'team' && team ? `${team.name} · ${route.section[0]!.toUpperCase()}${route.section.slice(1)}` : TITLES[route.name];
    document.title = page === 'Crewhost' ? page : `${page} · Crewhost`;
  }, [route, team?.name]);

  switch (route.name) {
    case 'setup':
      return <SetupScreen onSignedIn={(me) => void signedIn(me, null)} />;
    case 'signin':
      return <SignInScreen onSignedIn={(me) => void signedIn(me, route.next)} />;
    case 'signup':
      return <SignUpScreen onSignedIn={(me) => void signedIn(me, null)} />;
    case 'join':
      return (
        <JoinScreen
          code={route.code}
          onSignedIn={(me) => void signedIn(me, null)}
          onJoined={(joined) => {
            rememberLastTeam(joined.id);
            setState({ status: 'unknown' });
            navigate({ name: 'team', teamId: joined.id, section: 'members' }, { replace: true });
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
  else if ((route.name === 'team' || route.name === 'host') && team === null) page = <TeamMissingScreen />;
  else if (route.name === 'host' && team !== null) page = <HostScreen key={`${team.id}/${route.hostId}`} team={team} hostId={route.hostId} />;
  else if (route.name === 'team' && team !== null) {
    if (route.section === 'members') page = <MembersScreen key={team.id} team={team} />;
    else if (route.section === 'invitations') page = <InvitationsScreen key={team.id} team={team} />;
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
