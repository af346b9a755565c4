/** Names for the hub's wire types, all taken from the generated schema. */

import type { components } from './schema';

type Schemas = components['schemas'];

export type Role = Schemas['Role'];
export type AccountView = Schemas['AccountView'];
export type SessionView = Schemas['SessionView'];
export type SetupState = Schemas['SetupState'];
export type SignUp = Schemas['SignUp'];
export type SignIn = Schemas['SignIn'];
export type SignedIn = Schemas['SignedIn'];
export type TeamView = Schemas['TeamView'];
export type MemberView = Schemas['MemberView'];
export type InvitationView = Schemas['InvitationView'];
export type InvitationCreated = Schemas['InvitationCreated'];
export type CreateInvitation = Schemas['CreateInvitation'];
export type InvitationPreview = Schemas['InvitationPreview'];
export type HostView = Schemas['HostView'];
export type AccessTokenView = Schemas['AccessTokenView'];
export type AccessTokenCreated = Schemas['AccessTokenCreated'];
export type AccessTokenUseView = Schemas['AccessTokenUseView'];
export type CreateAccessToken = Schemas['CreateAccessToken'];
