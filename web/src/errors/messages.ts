/**
 * Words for every error code a person can meet: each code the hub's OpenAPI document
 * and the host protocol document declare (`x-error-codes`), and the few this client
 * makes itself. A test fails when a declared code has no message here.
 *
 * Each message says what happened and what the person can do, in a sentence.
 */

/** Codes the client itself gives a failure (no server sends them). */
export const CLIENT_ERROR_CODES = ['network', 'disconnected', 'timeout', 'openTimeout', 'noNetworkPath', 'hostSignatureInvalid'] as const;

const TABLE: Record<string, string> = {
  // The error hierarchy's own codes: the hub and the hosts answer with these alike.
  invalidArgument: 'Something in the request is not valid. Check what you entered and try again.',
  unauthenticated: 'Sign in to continue.',
  forbidden: 'Your role in this team does not allow that. Ask an admin or an owner.',
  notFound: 'That is no longer there. Reload to see what is there now.',
  conflict: 'That clashes with a change made in the meantime. Reload and try again.',
  rateLimited: 'Too many attempts. Wait a moment and try again.',
  internal: 'Something failed on the server. Try again in a moment.',
  unavailable: 'That is not available right now. Try again in a moment.',

  // The hub.
  methodNotAllowed: 'The hub does not offer that. Reload the page; it may have been updated.',
  payloadTooLarge: 'That file is too large. The limit is 1 MiB.',
  unsupportedMediaType: 'Use a PNG, JPEG or WebP image.',
  httpError: 'The hub refused the request. Reload the page and try again.',
  csrfRejected: 'The hub refused a request that did not come from this page. Reload and retry.',
  badCredentials: 'The email or the password is not right.',
  sessionExpired: 'Your session has ended. Sign in again.',
  signupClosed: 'Sign-up on this hub needs an invitation.',
  setupCodeInvalid:
    'This setup code is not valid (it may have been used already). Print a new one with "crewhost admin setup-code".',
  emailTaken: 'An account with this email already exists. Sign in instead.',
  avatarNotFound: 'This account has no picture yet.',
  notAnImage: 'That file is not a PNG, JPEG or WebP image.',
  tooManyTeams: 'You are in as many teams as an account may be. Leave one to create or join another.',
  teamNotFound: 'This team does not exist, or you are no longer a member.',
  memberNotFound: 'That person is no longer a member of this team.',
  ownerOnly: 'Only an owner can do that.',
  lastOwner: 'A team needs an owner. Make someone else an owner first.',
  tooManyInvitations: 'This team has as many open invitations as it may have. Revoke one it no longer needs first.',
  invitationInvalid: 'This invitation is no longer valid. Ask for a new link.',
  alreadyMember: 'You are already a member of this team.',
  hostNotFound: 'That host is no longer in this team. Reload the list of hosts.',
  invalidHostKey: 'The host offered a key that is not an Ed25519 key, so it was not enrolled.',
  enrolmentInvalid: 'This enrolment code is not valid (it may have expired or been used). Create a new one.',
  hostKeyTaken: 'This host is enrolled already.',
  hostOffline: 'The host is not connected to the hub. Check that it is running and online, then try again.',
  hostTimeout: 'The host did not answer in time. Try again; if it keeps happening, check that the host is running.',
  ticketNotYours: 'This connection was set up for another session. Reconnect to the host.',

  // A host's refusals of a connection, passed on by the hub.
  ticketInvalid: 'The host did not accept this connection. Reconnect; if it keeps happening, the host may not be linked to this hub.',
  ticketWrongHost: 'This connection was meant for another host. Reconnect.',
  ticketExpired: 'The connection took too long to set up. Reconnect.',
  ticketReplayed: 'This connection attempt was used already. Reconnect.',
  ticketRevoked: 'Your access to this host changed. Reconnect to continue with your current role.',
  fingerprintMismatch: 'The host refused the connection because it was not the one the hub approved. Reconnect.',
  badOffer: 'The host could not use the connection this browser offered. Reload the page and reconnect.',

  // Why a host ended a live connection (the code of its `revoked` event).
  sessionEnded: 'Your session has ended. Sign in again.',
  roleChanged: 'Your role in this team changed. Reconnect to continue with your new role.',
  removedFromTeam: 'You are no longer a member of this team, so its hosts and pages are closed to you. Ask an owner or an admin if you need to be added again.',
  hostRemoved: 'This host was removed from the team, so it can no longer be reached here.',

  // A host's Team API and live views.
  messageTooLarge: 'That is too large to send to the host. Send something smaller.',
  routeUnknown: 'This host does not offer that. It may need an update.',
  agentNotFound: 'That agent no longer exists. Reload to see the team’s agents.',
  agentLimit: 'This team has as many agents as it may have. Delete one first.',
  threadNotFound: 'That conversation no longer exists, or it is not shared with you.',
  turnRunning: 'The agent is still answering. Stop it or wait until it finishes.',
  attentionNotFound: 'That request is no longer waiting; it may have expired.',
  attentionAnswered: 'Someone has answered that request already.',
  attentionChanged: 'The agent’s request changed since you saw it. Look at it again before you answer.',
  providerNotFound: 'That model provider no longer exists. Reload the list of providers.',
  providerNameTaken: 'A model provider with this name exists already. Choose another name.',
  providerLimit: 'This team has as many custom model providers as it may have. Delete one first.',
  providerBuiltIn: 'A built-in model provider cannot be deleted. Clear its key instead.',
  providerInUse: 'Agents still use this model provider. Give them another provider first, then delete it.',
  providerKeyUnusable: 'The key saved for this model provider cannot be used on this host. Enter the key again.',
  providerNoModel: 'This model provider has no default model. Choose a model for the agent or the provider.',
  vaultItemNotFound: 'That vault item no longer exists. Reload the vault.',
  vaultFull: 'This team’s vault holds as many items as it may have. Delete one first.',
  vaultFieldNotAllowed: 'That field does not belong to this kind of vault item.',
  vaultSiteInvalid: 'A site must be a web address that starts with http:// or https://.',
  vaultCardNumberInvalid: 'That card number is not valid. Check the digits and enter it again.',
  vaultSecretUnusable: 'A secret saved in this vault item cannot be used on this host. Enter it again.',
  secretRequestKind: 'Your answer does not fit what was asked for. Look at the request again.',
  browserProfileNotFound: 'That browser profile no longer exists. Reload the list of profiles.',
  browserProfileNameTaken: 'A browser profile with this name exists already. Choose another name.',
  browserProfileLimit: 'This team has as many browser profiles as it may have. Delete one first.',
  browserProfileMissing: 'The agent’s browser profile was deleted. Choose another profile for the agent.',
  browserPartitionInvalid: 'The host could not tell which browser session to use. Reload and try again.',
  browserMissing: 'The host has no Chromium browser installed. Ask the person who runs the host to install it.',
  browserStopped: 'The host’s browser is not running. Try again in a moment.',
  invalidTeamId: 'The host did not recognise this team. Reload and try again.',
  tabNotFound: 'That tab is closed, or you cannot see it. Reload the list of tabs.',
  tabHeld: 'Someone else has control of this tab. Wait until they release it.',
  tabHeldByPerson: 'A person has control of this tab, so the agent cannot use it until they release it.',
  tabNotHeld: 'You do not have control of this tab. Take control first.',
  tabFree: 'Nobody has control of this tab now, so you can take control yourself.',
  controlAlreadyYours: 'You have control of this tab already.',
  controlRequestNotFound: 'That request for control is no longer waiting; it was answered, lapsed or cancelled.',
  askerNotWatching: 'The person who asked is no longer watching this tab, so control cannot pass to them.',
  tabHoldsSecret: 'This tab is asking for a secret (such as a password), so it cannot be watched. It can be watched again once the secret is entered.',
  tabDeadline: 'The tab took too long to respond. Try again.',
  dialogOpen: 'A dialog is open on this page. Answer it first.',
  dialogClosed: 'That dialog is closed already.',
  dialogForPerson: 'A person must answer this dialog.',
  addressRefused: 'The host does not allow opening that address.',
  memoryLimit: 'The agent keeps as many memories as it may. Remove old ones first.',
  invalidSite: 'Enter a site such as example.com.',
  viewLabelInvalid: 'The live view could not be opened. Reload and try again.',
  frameInvalid: 'The live view sent a picture this page cannot show. Reload to try again.',
  viewStopped: 'The live view has stopped. Open the tab again.',
  notHolding: 'Take control of the tab first.',
  noFrameYet: 'The live view is still starting. Try again in a moment.',
  menuGone: 'That menu has closed. Open it again.',
  menuItemInvalid: 'That menu item is no longer there. Open the menu again.',
  pageUnavailable: 'The page did not respond. Try again.',
  pageCrashed: 'The page stopped working. Reload the tab to bring it back.',
  hostStopping: 'The host is shutting down. Reconnect once it is back.',

  // This client's own.
  network: 'The hub could not be reached. Check your connection and try again.',
  disconnected: 'The connection to the host has closed. Reconnect to continue.',
  timeout: 'The host did not answer in time. Try again.',
  openTimeout: 'The host did not open the connection in time. Try again.',
  noNetworkPath: 'No network path to the host was found. Check your connection, or ask the person who runs the host about its network.',
  hostSignatureInvalid: 'The answer was not signed by the host, so the connection was refused.',
};

/** Every code with a message (a Map, so a code like `constructor` finds nothing). */
export const ERROR_MESSAGES: ReadonlyMap<string, string> = new Map(Object.entries(TABLE));

/** What a person reads when the hub or a host refused with a code this client does not know. */
export const UNKNOWN_ERROR = {
  hub: 'The hub refused that. Reload the page and try again.',
  host: 'The host refused that. Try again; if it keeps happening, reload the page.',
} as const;
