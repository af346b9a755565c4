/** Every hub call the web client makes, one function each. */

import { call } from './typed-call';
import type { CreateAccessToken, CreateInvitation, Role, SignIn, SignUp } from './types';

const PUBLIC = { signInOn401: false } as const;

// --- setup, sign-up, sign-in -------------------------------------------------------

export const getSetupState = () => call('get', '/v1/setup', PUBLIC);
export const signUp = (body: SignUp) => call('post', '/v1/accounts', { ...PUBLIC, json: body });
export const signIn = (body: SignIn) => call('post', '/v1/sessions', { ...PUBLIC, json: body });
export const signOut = () => call('delete', '/v1/sessions/current', PUBLIC);

// --- the signed-in account ---------------------------------------------------------

export const getMe = () => call('get', '/v1/me', {});
/** "Am I signed in?": a 401 here is an answer, not a reason to show sign-in. */
export const probeMe = () => call('get', '/v1/me', PUBLIC);
export const updateProfile = (name: string) =>
  call('patch', '/v1/me/profile', { json: { name } });
export const putAvatar = (image: Blob) => call('put', '/v1/me/avatar', { raw: image });
export const deleteAvatar = () => call('delete', '/v1/me/avatar', {});
/** Where the avatar image is; `version` makes the browser fetch a changed one. */
export const avatarUrl = (version: number) => `/v1/me/avatar?v=${version}`;
export const listSessions = () => call('get', '/v1/me/sessions', {});
export const revokeSession = (sessionId: string) =>
  call('delete', '/v1/me/sessions/{session_id}', { params: { session_id: sessionId } });
export const revokeOtherSessions = () => call('post', '/v1/me/sessions/revoke-others', {});

// --- teams and members -------------------------------------------------------------

export const listTeams = () => call('get', '/v1/teams', {});
export const createTeam = (name: string) => call('post', '/v1/teams', { json: { name } });
export const listMembers = (teamId: string) =>
  call('get', '/v1/teams/{team_id}/members', { params: { team_id: teamId } });
/** Where a teammate's avatar is; the hub serves it to members of this team only. */
export const memberAvatarUrl = (teamId: string, accountId: string) =>
  `/v1/teams/${encodeURIComponent(teamId)}/members/${encodeURIComponent(accountId)}/avatar`;
export const changeRole = (teamId: string, accountId: string, role: Role) =>
  call('patch', '/v1/teams/{team_id}/members/{account_id}', {
    params: { team_id: teamId, account_id: accountId },
    json: { role },
  });
export const removeMember = (teamId: string, accountId: string) =>
  call('delete', '/v1/teams/{team_id}/members/{account_id}', { params: { team_id: teamId, account_id: accountId } });
export const leaveTeam = (teamId: string) =>
  call('post', '/v1/teams/{team_id}/leave', { params: { team_id: teamId } });

// --- invitations -------------------------------------------------------------------

export const createInvitation = (teamId: string, body: CreateInvitation) =>
  call('post', '/v1/teams/{team_id}/invitations', { params: { team_id: teamId }, json: body });
export const listInvitations = (teamId: string) =>
  call('get', '/v1/teams/{team_id}/invitations', { params: { team_id: teamId } });
export const revokeInvitation = (teamId: string, invitationId: string) =>
  call('delete', '/v1/teams/{team_id}/invitations/{invitation_id}', {
    params: { team_id: teamId, invitation_id: invitationId },
  });
export const previewInvitation = (code: string) =>
  call('post', '/v1/invitations/preview', { ...PUBLIC, json: { code } });
export const acceptInvitation = (code: string) =>
  call('post', '/v1/invitations/accept', { json: { code } });

// --- hosts -------------------------------------------------------------------------

export const listHosts = (teamId: string) =>
  call('get', '/v1/teams/{team_id}/hosts', { params: { team_id: teamId } });
export const getRtcConfig = () => call('get', '/v1/rtc', {});
export const issueTicket = (teamId: string, hostId: string, fingerprint: string) =>
  call('post', '/v1/teams/{team_id}/hosts/{host_id}/tickets', {
    params: { team_id: teamId, host_id: hostId },
    json: { fingerprint },
  });
export const relayOffer = (teamId: string, hostId: string, ticket: string, sdp: string) =>
  call('post', '/v1/teams/{team_id}/hosts/{host_id}/connect', {
    params: { team_id: teamId, host_id: hostId },
    json: { ticket, sdp },
  });
export const createEnrolment = (teamId: string, name: string) =>
  call('post', '/v1/teams/{team_id}/hosts/enrolments', { params: { team_id: teamId }, json: { name } });
export const removeHost = (teamId: string, hostId: string) =>
  call('delete', '/v1/teams/{team_id}/hosts/{host_id}', { params: { team_id: teamId, host_id: hostId } });

// --- personal access tokens (the MCP endpoint) ---------------------------------------

export const createAccessToken = (teamId: string, body: CreateAccessToken) =>
  call('post', '/v1/teams/{team_id}/access-tokens', { params: { team_id: teamId }, json: body });
/** The caller's own tokens; `all` (owners and admins) every member's. */
export const listAccessTokens = (teamId: string, all: boolean) =>
  all
    ? call('get', '/v1/teams/{team_id}/access-tokens/all', { params: { team_id: teamId } })
    : call('get', '/v1/teams/{team_id}/access-tokens', { params: { team_id: teamId } });
export const revokeAccessToken = (teamId: string, tokenId: string) =>
  call('delete', '/v1/teams/{team_id}/access-tokens/{token_id}', { params: { team_id: teamId, token_id: tokenId } });
/** The audit list of the caller's tokens; `all` (owners and admins) every member's. */
export const listAccessTokenUses = (teamId: string, all: boolean) =>
  all
    ? call('get', '/v1/teams/{team_id}/access-token-uses/all', { params: { team_id: teamId } })
    : call('get', '/v1/teams/{team_id}/access-token-uses', { params: { team_id: teamId } });
