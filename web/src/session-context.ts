/** The signed-in account and its teams, shared by every screen inside the app's shell. */

import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AccountView, TeamView } from './api/types';

export interface AppSession {
  me: AccountView;
  teams: TeamView[];
  /** Bumped when the avatar changes, so its image is fetched again. */
  avatarVersion: number;
  setMe: (me: AccountView, avatarChanged?: boolean) => void;
  reloadTeams: () => Promise<TeamView[]>;
  /** The hub changed this account's teams or roles elsewhere: load them again (a team gone is a removal). */
  accessChanged: () => Promise<void>;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<AppSession | null>(null);

export function useSession(): AppSession {
  const session = useContext(SessionContext);
  if (session === null) throw new Error('useSession outside the signed-in shell');
  return session;
}
