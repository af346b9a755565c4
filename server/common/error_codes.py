"""Every error code a client may receive, each with one line saying what it means.

The hub's OpenAPI document and the host protocol document list these (as
``x-error-codes``), and the web client keeps a message for each; a test fails when
code raises a code that is not declared here. A code is one of the error
hierarchy's (``server.common.errors``) or a refinement of one (``lastOwner`` is a
``conflict``), so its HTTP status stays the class's.
"""

from __future__ import annotations

from typing import NamedTuple


class ErrorCode(NamedTuple):
    """A stable, machine-readable code and what it means (for the people who read lists)."""

    code: str
    meaning: str


# The hierarchy's own classes: hub and host answer with these alike.
GENERAL_ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode("invalidArgument", "A field or argument is missing or not valid."),
    ErrorCode("unauthenticated", "The caller is not signed in."),
    ErrorCode("forbidden", "The caller's role is too low for this."),
    ErrorCode("notFound", "The thing asked for does not exist."),
    ErrorCode("conflict", "The request clashes with the current state."),
    ErrorCode("rateLimited", "Too many requests; wait and try again."),
    ErrorCode("internal", "The server failed unexpectedly."),
    ErrorCode("unavailable", "A part of the server is not available right now."),
)

# What the hub's HTTP API answers with, besides the general codes.
HUB_ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode("methodNotAllowed", "The route does not take this HTTP method."),
    ErrorCode("payloadTooLarge", "The request body is too large."),
    ErrorCode("unsupportedMediaType", "The request body is of a type the route does not take."),
    ErrorCode(
        "invalidBody",
        "The request body could not be read: not encoded as its Content-Encoding says, "
        "or cut short.",
    ),
    ErrorCode("httpError", "Another HTTP refusal, before any route ran."),
    ErrorCode("csrfRejected", "A write came without the CSRF header or from another site."),
    ErrorCode("badCredentials", "The email or the password is wrong."),
    ErrorCode("sessionExpired", "The session ended; sign in again."),
    ErrorCode("signupClosed", "Sign-up on this hub needs an invitation."),
    ErrorCode("setupCodeInvalid", "The first-start setup code is not valid or was used."),
    ErrorCode("emailTaken", "An account with this email exists."),
    ErrorCode("avatarNotFound", "The account has no avatar."),
    ErrorCode("notAnImage", "An avatar is not a PNG, JPEG or WebP image."),
    ErrorCode("tooManyTeams", "The account is in as many teams as it may be."),
    ErrorCode("teamNotFound", "No such team, or the caller is not a member."),
    ErrorCode("memberNotFound", "No such member in this team."),
    ErrorCode("ownerOnly", "Only an owner may do this (to an owner)."),
    ErrorCode("lastOwner", "The team would be left without an owner."),
    ErrorCode("tooManyInvitations", "The team has as many open invitations as it may."),
    ErrorCode("accessTokenInvalid", "The bearer is not a known personal access token."),
    ErrorCode("accessTokenExpired", "The personal access token has expired."),
    ErrorCode("accessTokenRevoked", "The personal access token was revoked."),
    ErrorCode("accessTokenNotFound", "No such personal access token of yours in this team."),
    ErrorCode("tooManyAccessTokens", "The member holds as many live tokens as they may."),
    ErrorCode("invitationInvalid", "The invitation is unknown, revoked, expired or used up."),
    ErrorCode("alreadyMember", "The caller is a member of this team already."),
    ErrorCode("hostNotFound", "No such host in this team."),
    ErrorCode("invalidHostKey", "A host's public key is not an Ed25519 key."),
    ErrorCode("enrolmentInvalid", "The host enrolment code is not valid or was used."),
    ErrorCode("hostKeyTaken", "This host key is enrolled already."),
    ErrorCode("hostOffline", "The host is not connected to the hub."),
    ErrorCode("hostTimeout", "The host did not answer the hub in time."),
    ErrorCode("ticketNotYours", "The ticket was issued to another session, team or host."),
    ErrorCode("hookSignature", "A webhook delivery's signature does not check out."),
    ErrorCode("hookReplayed", "A webhook delivery with this webhook-id was received already."),
    ErrorCode("hookNotFound", "No such webhook trigger, or it is disabled."),
)

# A host's refusals of a connection (its ticket or offer), which the hub passes on.
CONNECTION_ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode("ticketInvalid", "The ticket is malformed, not signed by the hub, or unusable."),
    ErrorCode("ticketWrongHost", "The ticket is for another host."),
    ErrorCode("ticketExpired", "The ticket has expired."),
    ErrorCode("ticketReplayed", "The ticket was used already."),
    ErrorCode("ticketRevoked", "Access changed since the ticket was issued."),
    ErrorCode("fingerprintMismatch", "The offer's certificate is not the one the ticket names."),
    ErrorCode("badOffer", "The host could not use the connection offer."),
)

# What a host answers on its team-api and view channels, besides the general codes.
HOST_ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode("messageTooLarge", "A team-api or view message is larger than the channel allows."),
    ErrorCode("routeUnknown", "This host has no such Team API route."),
    ErrorCode("agentNotFound", "No such agent in this team."),
    ErrorCode("agentLimit", "The team has as many agents as it may."),
    ErrorCode(
        "agentMayAskInvalid",
        "An agent may ask only other agents of its team; one named is itself or not one.",
    ),
    ErrorCode("threadNotFound", "No such thread, or it is not shared with the caller."),
    ErrorCode("turnRunning", "The agent is still answering in this thread."),
    ErrorCode("attentionNotFound", "No such request for attention; it may have expired."),
    ErrorCode("attentionAnswered", "The request for attention was answered already."),
    ErrorCode("attentionChanged", "The call asked about changed since it was shown."),
    ErrorCode(
        "attentionInterrupted",
        "The request ended when its host stopped or restarted; its turn ended interrupted.",
    ),
    ErrorCode("queuedMessageNotFound", "No such queued message of the caller; a turn took it."),
    ErrorCode("queueFull", "The thread's queue holds as many messages as it may."),
    ErrorCode(
        "attentionWrongKind",
        "The answer is of the other kind: a question takes a reply, a consent an approval.",
    ),
    ErrorCode(
        "answerInvalid",
        "An answer to an agent's question is empty, too long or not among its options.",
    ),
    ErrorCode("taskNotFound", "No such task in the thread's task list."),
    ErrorCode("taskLimit", "The thread's task list holds as many tasks as it may."),
    ErrorCode("attachmentTooLarge", "An attachment is larger than a message may carry."),
    ErrorCode("attachmentTooMany", "A message carries more attachments than it may."),
    ErrorCode("attachmentNotFound", "No such attachment in the thread."),
    ErrorCode(
        "attachmentNoPreview", "The attachment has no preview (only images and SVG have one)."
    ),
    ErrorCode("providerNotFound", "No such model provider in this team."),
    ErrorCode("providerNameTaken", "A model provider of this name exists."),
    ErrorCode("providerLimit", "The team has as many custom model providers as it may."),
    ErrorCode("providerBuiltIn", "A built-in model provider cannot be deleted."),
    ErrorCode("providerInUse", "Agents use the model provider, so it cannot be deleted."),
    ErrorCode("providerKeyMissing", "The model provider has no API key set; a turn ends with it."),
    ErrorCode("providerKeyRefused", "The model provider refused its API key; a turn ends with it."),
    ErrorCode("providerKeyUnusable", "The provider's stored key cannot be opened by this host."),
    ErrorCode("providerNoModel", "The provider has no default model and the agent names none."),
    ErrorCode("vaultItemNotFound", "No such vault item in this team."),
    ErrorCode("vaultFull", "The team's vault holds as many items as it may."),
    ErrorCode("vaultFieldNotAllowed", "The field does not belong to this kind of vault item."),
    ErrorCode("vaultSiteInvalid", "A vault login's site is not an http or https address."),
    ErrorCode("vaultCardNumberInvalid", "A card number is not a valid card number."),
    ErrorCode("vaultSecretUnusable", "A vault item's stored secret cannot be opened by this host."),
    ErrorCode("secretRequestKind", "The answer does not fit what the request asks for."),
    ErrorCode("browserProfileNotFound", "No such browser profile in this team."),
    ErrorCode("browserProfileNameTaken", "A browser profile of this name exists."),
    ErrorCode("browserProfileLimit", "The team has as many browser profiles as it may."),
    ErrorCode("browserProfileMissing", "The agent's browser profile no longer exists."),
    ErrorCode("browserProxyAddressInvalid", "A proxy address is not in a form the host reads."),
    ErrorCode(
        "browserProxySchemeUnsupported",
        "A proxy address names a scheme other than http, https or socks5.",
    ),
    ErrorCode("browserProxyPortMissing", "A proxy address without a scheme has no port."),
    ErrorCode("browserProxyPortInvalid", "A proxy address's port is not a number from 1 to 65535."),
    ErrorCode(
        "browserProxyHostInvalid",
        "A proxy address's host is not a host name or an IP address.",
    ),
    ErrorCode("browserProxyNotFound", "No such proxy in this team."),
    ErrorCode("browserProxyLimit", "The team has as many proxies as it may."),
    ErrorCode("browserProxyChanged", "The proxy changed since it was shown."),
    ErrorCode(
        "proxyAddressRefused",
        "The host's address policy refuses this proxy's address (loopback, private, "
        "link-local or another special-purpose address, or the host's own).",
    ),
    ErrorCode("browserProxyComputerFixed", "A member's computer has no address to edit."),
    ErrorCode(
        "mcpStdioNotAllowed",
        "This host runs no stdio MCP servers for the team: its operator allows them.",
    ),
    ErrorCode(
        "secretNeedsReentry",
        "Where a saved secret is sent changed (another host or command, or no encryption "
        "where there was): enter the secret again, or clear it.",
    ),
    ErrorCode(
        "browserProxyAutomaticOnly",
        "The shared profile and 'only this agent' always use the automatic proxy.",
    ),
    ErrorCode(
        "browserProxyPasswordUnusable",
        "The proxy's stored password cannot be opened by this host.",
    ),
    ErrorCode("browserProxyUnreachable", "The page did not load because its proxy did not answer."),
    ErrorCode(
        "browserProxySignInRefused",
        "The page did not load because its proxy refused the sign-in.",
    ),
    ErrorCode(
        "browserProxyComputerUnreachable",
        "The page did not load because the member's computer is not sharing.",
    ),
    ErrorCode(
        "browserProxyTargetRefused",
        "The page did not load because its proxy or the member's computer refused the site.",
    ),
    ErrorCode("browserPartitionInvalid", "A browser partition is malformed."),
    ErrorCode("browserMissing", "The host has no Chromium to run."),
    ErrorCode("browserStopped", "The host's browser is not running."),
    ErrorCode("invalidTeamId", "A team id is malformed."),
    ErrorCode("tabNotFound", "No such tab, or it is private to an agent."),
    ErrorCode("tabHeld", "Another person has control of the tab."),
    ErrorCode("tabHeldByPerson", "A person has control of the tab, so an agent may not use it."),
    ErrorCode("tabNotHeld", "The caller does not have control of the tab."),
    ErrorCode("tabFree", "Nobody has control of the tab, so take control rather than ask."),
    ErrorCode("controlAlreadyYours", "The caller has control of the tab already."),
    ErrorCode("notAsker", "Only the member who asked for control can withdraw the request."),
    ErrorCode(
        "controlRequestNotFound",
        "No such request for control; it was answered, lapsed or cancelled.",
    ),
    ErrorCode("askerNotWatching", "The member who asked for control no longer watches the tab."),
    ErrorCode("tabHoldsSecret", "The tab is in secure entry and cannot be watched."),
    ErrorCode("teachNeedsAgentTab", "Only an agent's tab can teach it a task."),
    ErrorCode(
        "teachTabNotRecordable",
        "Steps are not recorded on this tab (a private sign-in, secure entry, not a web page).",
    ),
    ErrorCode("teachRecordingRunning", "The tab is being recorded already."),
    ErrorCode("teachNotWatching", "The member must watch the tab to record on it."),
    ErrorCode("teachNotYours", "Only the member who started a recording can save or discard it."),
    ErrorCode("teachRecordingNotFound", "No such recording; it was saved, discarded or ended."),
    ErrorCode("teachRecordingExpired", "The recording ran out of time."),
    ErrorCode("tabDeadline", "A tab operation took too long."),
    ErrorCode(
        "navigationReplaced", "Another navigation in the tab replaced this one before it loaded."
    ),
    ErrorCode("dialogOpen", "A page dialog is open in the tab."),
    ErrorCode("dialogClosed", "The page dialog is closed already."),
    ErrorCode("dialogForPerson", "A person must answer this page dialog."),
    ErrorCode("addressRefused", "The host's address policy refuses this address."),
    ErrorCode(
        "webhookAddressRefused",
        "The host's address policy refuses this webhook's address (loopback, private, "
        "link-local or another special-purpose address, or the host's own).",
    ),
    ErrorCode("teamWebhookNotFound", "No such webhook in this team."),
    ErrorCode("teamWebhookLimit", "The team has as many webhooks as it may."),
    ErrorCode(
        "providerAddressRefused",
        "The host's address policy refuses this model provider's or SearXNG instance's "
        "address (loopback, private, link-local or another special-purpose address, or the "
        "host's own).",
    ),
    ErrorCode(
        "mcpAddressRefused",
        "The host's address policy refuses this MCP server's address (loopback, private, "
        "link-local or another special-purpose address, or the host's own).",
    ),
    ErrorCode("mcpServerNotFound", "No such MCP server in this team."),
    ErrorCode("mcpServerNameTaken", "The team has an MCP server of that name already."),
    ErrorCode("mcpServerLimit", "The team has as many MCP servers as it may."),
    ErrorCode("mcpSignInNotNeeded", "This MCP server does not ask for an OAuth sign-in."),
    ErrorCode("mcpSignInFailed", "An MCP server's OAuth sign-in could not be started."),
    ErrorCode(
        "mcpSignInExpired", "No such MCP sign-in running: it ended, expired or was cancelled."
    ),
    ErrorCode("mcpSignInRunning", "Another person's sign-in to this MCP server is running."),
    ErrorCode(
        "mcpSignInNeedsClient",
        "The MCP server's authorization server registers no clients: an owner or admin "
        "enters the client id (and secret) registered with it.",
    ),
    ErrorCode(
        "mcpSignInIssuerMismatch",
        "An MCP sign-in's answer named another issuer than the authorization server asked, "
        "or none where it said it would (RFC 9207); it was refused.",
    ),
    ErrorCode(
        "mcpSignInServerChanged",
        "The MCP server's address or OAuth client changed during its sign-in, which ended.",
    ),
    ErrorCode("skillInvalid", "A skill's files or SKILL.md front matter break the format."),
    ErrorCode(
        "skillArchiveRefused",
        "A skill's .zip was refused before anything was written; the message names the "
        "reason (a link, a path, a size, a count, a bomb, the layout).",
    ),
    ErrorCode("skillNotFound", "No such skill in this team (or not one the agent has)."),
    ErrorCode("skillNameTaken", "The team has a skill of that name already."),
    ErrorCode("skillVersionNotFound", "The skill has no such version."),
    ErrorCode("skillFileNotFound", "The skill has no file at that path."),
    ErrorCode("skillFileNotText", "The skill's file is not text."),
    ErrorCode("skillNotDraft", "The skill is not a draft: it was saved already."),
    ErrorCode("skillUploadLimit", "The member has as many skill uploads under way as they may."),
    ErrorCode("skillUploadInvalid", "A chunk of a skill upload does not fit, or some is missing."),
    ErrorCode("skillUploadNotFound", "No such skill upload; it may have expired."),
    ErrorCode(
        "agentTemplateRefused",
        "An agent template's .zip was refused before anything was written; the message names "
        "the reason (a link, a path, a size, a count, a bomb).",
    ),
    ErrorCode(
        "agentTemplateInvalid",
        "The file is not an agent template this host reads: its manifest, content hash, "
        "format version or settings are wrong.",
    ),
    ErrorCode(
        "agentTemplateSecretFound",
        "Text in the agent template looks like a key or token; the message names the file "
        "and line. Nothing was exported or imported.",
    ),
    ErrorCode("agentTemplateTooLarge", "The agent template would hold too many files or bytes."),
    ErrorCode(
        "agentTemplateUploadInvalid",
        "A chunk of an agent template upload does not fit, or some is missing.",
    ),
    ErrorCode(
        "agentTemplateTransferNotFound",
        "No such agent template upload or download; it may have expired.",
    ),
    ErrorCode("nameNotResolved", "A host name did not resolve to any address."),
    ErrorCode("memoryLimit", "The agent keeps as many memories as it may."),
    ErrorCode("memoryNotFound", "No such memory of the agent, or not one the caller may reach."),
    ErrorCode("invalidSite", "A memory's site is not a host name."),
    ErrorCode("viewLabelInvalid", "A view channel's label is malformed."),
    ErrorCode("frameInvalid", "A view frame is malformed."),
    ErrorCode("viewStopped", "The live view is not running."),
    ErrorCode("notHolding", "Input needs control of the tab first."),
    ErrorCode("noFrameYet", "The live view has no frame yet."),
    ErrorCode("menuGone", "The context menu has closed."),
    ErrorCode("menuItemInvalid", "The item chosen was not on the context menu."),
    ErrorCode("pageUnavailable", "The page did not answer."),
    ErrorCode("pageCrashed", "The page stopped working; a reload brings it back."),
    ErrorCode("hostStopping", "The host is shutting down (a view's close code)."),
    ErrorCode("viewLimit", "The connection has as many live views open as it may."),
    ErrorCode("invalidUrl", "A web address is not an http or https address with a host."),
    ErrorCode("fetchFailed", "A web address could not be fetched."),
    ErrorCode("fetchTimeout", "A web address did not answer in time."),
    ErrorCode("tooManyRedirects", "A web address redirected too many times."),
    ErrorCode("unsupportedContent", "A web address answered content that is not read."),
    ErrorCode("summaryFailed", "The model could not distil what a tool read."),
    ErrorCode("searchFailed", "The web search engine could not answer."),
    ErrorCode("searchRateLimited", "The web search engine is limiting searches; wait or switch."),
    ErrorCode("searchKeyRefused", "The web search engine refused its key."),
    ErrorCode("notificationNotFound", "No such notification for the caller."),
    ErrorCode("mailNotSet", "The team has no mail server set; an owner sets one."),
    ErrorCode("mailFailed", "The mail server could not be reached or refused the mail."),
    ErrorCode(
        "workspacePathInvalid",
        "A workspace path is absolute, escapes, meets a link or uses a refused name.",
    ),
    ErrorCode("workspaceNotFound", "No such file or folder in the workspace."),
    ErrorCode("workspaceIsFile", "A workspace path names a file where a folder is needed."),
    ErrorCode("workspaceIsFolder", "A workspace path names a folder where a file is needed."),
    ErrorCode(
        "workspaceNotAFile", "A workspace path names a pipe, device or socket, never opened."
    ),
    ErrorCode("workspaceFileTooLarge", "The file is larger than a workspace takes."),
    ErrorCode(
        "workspaceAgentFull",
        "The agent's workspace holds as many files, folders or bytes as it may.",
    ),
    ErrorCode(
        "workspaceTeamFull",
        "The team's workspaces hold as many files, folders or bytes as they may.",
    ),
    ErrorCode("workspaceUploadLimit", "The member has as many unfinished uploads as they may."),
    ErrorCode("workspaceUploadNotFound", "No such upload; it finished, was cancelled or expired."),
    ErrorCode(
        "workspaceChunkInvalid", "An upload chunk is too large, out of order or past the end."
    ),
    ErrorCode("workspaceUploadIncomplete", "An upload was finished before all its bytes arrived."),
    ErrorCode("routineNotFound", "No such routine, or one the caller does not see."),
    ErrorCode("invalidSchedule", "A routine's schedule is not valid (the field is named)."),
    ErrorCode("routineTimePassed", "A routine set to run once at a time already past."),
    ErrorCode(
        "routineCreatorGone",
        "A routine whose creator left the team cannot be turned on again: it runs as them.",
    ),
    ErrorCode("scheduleTooFrequent", "A routine's schedule would fire more than once a minute."),
    ErrorCode("hookNotFound", "No such webhook trigger, or it is disabled."),
    ErrorCode("tooManyHooks", "The routine has as many webhook triggers as it may."),
    ErrorCode("routinesUnavailable", "This host cannot start routines."),
    ErrorCode(
        "budgetExceeded",
        "A budget of the team is spent: new turns and routine runs wait until an owner or "
        "admin raises it (the message names the budget).",
    ),
    ErrorCode("budgetNotFound", "No such budget in the team."),
    ErrorCode("invalidBudget", "A budget's field is not valid (the field is named)."),
    ErrorCode("tooManyBudgets", "The team has as many budgets as it may."),
    ErrorCode("invalidPrice", "A price is not a number of US dollars per million tokens."),
    ErrorCode("priceNotFound", "No such price in the team."),
    ErrorCode("invalidTimeZone", "A time zone is not an IANA time zone name."),
    ErrorCode(
        "invalidCurrency", "A currency is not a three-letter code, or its rate is not valid."
    ),
)

# Why a host ended a connection: the ``code`` of its ``revoked`` event (the hub names it).
REVOCATION_CODES: tuple[ErrorCode, ...] = (
    ErrorCode("sessionEnded", "The session was signed out or expired."),
    ErrorCode("roleChanged", "The member's role in the team changed; a new connection has it."),
    ErrorCode("accessChanged", "The member's access changed (said by a hub that names no cause)."),
    ErrorCode("removedFromTeam", "The account is no longer a member of the team."),
    ErrorCode("hostRemoved", "The host was removed from the team."),
)

# What the command line meets (the host's key ring); no route answers with these.
ADMIN_ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode("keyRingInvalid", "The key ring cannot be used as it is."),
    ErrorCode("keyRingMissing", "There is no key ring where one must be."),
    ErrorCode("keyRingLocked", "The key ring needs its passphrase, or the one given is wrong."),
    ErrorCode("keyRingBusy", "Another process holds the key ring."),
    ErrorCode(
        "keyRingNotWrapped",
        "A master passphrase is set, but the key ring is plain: wrap it with wrap-key-ring.",
    ),
    ErrorCode("keyNotFound", "The key ring has no such key."),
    ErrorCode("keyActive", "The key is the active one; rotate first."),
    ErrorCode("keyInUse", "Secrets still use the key; rotate first."),
    ErrorCode("secretUnreadable", "A sealed secret cannot be opened."),
    ErrorCode("backupUnreadable", "The backup cannot be read as a Crewhost backup."),
    ErrorCode("backupPassphraseMissing", "A backup or restore was given no passphrase."),
    ErrorCode("backupPassphraseWrong", "The passphrase does not open this backup."),
    ErrorCode("backupTampered", "The backup was changed, damaged or cut off."),
    ErrorCode("backupFormatUnknown", "The file is not a backup, or of a newer format."),
    ErrorCode("backupRefused", "The backup or restore cannot go ahead as asked."),
    ErrorCode("backupInsideDataFolder", "A backup is written outside the data folder it copies."),
    ErrorCode("restoreTargetNotEmpty", "A restore goes only into an empty folder."),
    ErrorCode("restoreTargetNotFolder", "A restore goes into a folder, and the path is a file."),
    ErrorCode("backupBusy", "Another backup writes that file, or another restore that folder."),
    ErrorCode("pgDumpMissing", "A PostgreSQL backup needs pg_dump, which is not installed."),
    ErrorCode("pgDumpFailed", "The PostgreSQL dump failed."),
    ErrorCode("psqlMissing", "Loading a PostgreSQL backup needs psql, which is not installed."),
    ErrorCode("restoreDatabaseNotEmpty", "A restore loads only into an empty database."),
    ErrorCode("restoreLoadFailed", "The backup's database could not be loaded."),
    ErrorCode("databaseTooNew", "The database was made by a newer Crewhost than this one."),
)

HUB_ANSWERS: tuple[ErrorCode, ...] = GENERAL_ERROR_CODES + HUB_ERROR_CODES + CONNECTION_ERROR_CODES
"""Every code the hub's HTTP API may answer with."""

HOST_ANSWERS: tuple[ErrorCode, ...] = GENERAL_ERROR_CODES + HOST_ERROR_CODES + REVOCATION_CODES
"""Every code a host's team-api route, view channel or ``revoked`` event may answer with."""

ALL_ERROR_CODES: frozenset[str] = frozenset(
    entry.code for entry in HUB_ANSWERS + HOST_ANSWERS + ADMIN_ERROR_CODES
)


def declared(codes: tuple[ErrorCode, ...]) -> list[dict[str, str]]:
    """``codes`` as a document lists them (``x-error-codes``)."""
    return [{"code": entry.code, "meaning": entry.meaning} for entry in codes]
