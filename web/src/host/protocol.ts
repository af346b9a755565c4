/**
 * The host protocol in TypeScript: every type comes from the generated `protocol.d.ts`
 * (made from the host's own models by `crewhost admin host-protocol`), so a change on the
 * host breaks this build. The constants are checked against the same document by a test.
 */

import type { components, paths } from './schema';

type Schemas = components['schemas'];

export const PROTOCOL_VERSION = 1;
export const TEAM_API_LABEL = 'team-api';
export const MAX_TEAM_API_MESSAGE = 256 * 1024;
export const VIEW_PREFIX = 'view:';
export const FRAME_VERSION = 1;
export const FRAME_HEADER_BYTES = 18;
export const MAX_CLIPBOARD = 1024 * 1024;

/** A Team API route name, e.g. `browser-profiles-v1/list`. */
export type RouteName = keyof paths extends infer P ? (P extends `/${infer N}` ? N : never) : never;

type Operation<N extends RouteName> = paths[`/${N}`]['post'];
export type RouteArgs<N extends RouteName> =
  Operation<N> extends { requestBody: { content: { 'application/json': infer A } } } ? A : never;
export type RouteResult<N extends RouteName> =
  Operation<N> extends { responses: { 200: { content: { 'application/json': infer R } } } }
    ? R
    : never;

export type ViewMessage = Schemas['ViewMessage'];
export type HostViewMessage = Schemas['HostViewMessage'];
export type MenuItem = Schemas['MenuChoice']['item'];
export type ContextMenu = Schemas['ContextMenu'];
export type TabView = Schemas['TabView'];
export type ProfileView = Schemas['ProfileView'];
export type Capabilities = Schemas['Capabilities'];
export type Whoami = Schemas['Whoami'];
export type Role = Schemas['Role'];

/** A Team API event as the host sends it: `{event, data}`, one generated type per event. */
export type HostEventMessage = Schemas['HostEventMessage'];
export type EventName = HostEventMessage['event'];
export type EventData<N extends EventName> = Extract<HostEventMessage, { event: N }>['data'];

/** An event as it arrives, before its name is checked against the ones this client knows. */
export interface TeamApiEvent {
  event: string;
  data: unknown;
}

/** Capabilities the client shows parts of the screen for. */
export const CAPABILITY = {
  browserControl: 'browser-control-v1',
  browserProfiles: 'browser-profiles-v1',
  agentMemories: 'agent-memories-v1',
  routines: 'routines-v1',
  agentTemplates: 'agent-templates-v1',
  profileEvents: 'browser-profiles-events-v1',
  view: 'browser-view',
  viewCursor: 'browser-view-cursor',
  viewClipboard: 'browser-view-clipboard',
  viewContextMenu: 'browser-view-context-menu',
  viewViewport: 'browser-view-viewport',
  viewTake: 'browser-view-take',
  agents: 'agents-v1',
  threads: 'threads-v1',
  attention: 'attention-v1',
  providers: 'providers-v1',
  workspace: 'workspace-v1',
  vault: 'vault-v1',
  browserProxies: 'browser-proxies-v1',
  webSearch: 'web-search-v1',
  notifications: 'notifications-v1',
  mailServer: 'mail-server-v1',
  teamWebhooks: 'team-webhooks-v1',
  mcpServers: 'mcp-servers-v1',
  skills: 'skills-v1',
  teach: 'browser-teach-v1',
  usage: 'usage-v1',
  budgets: 'budgets-v1',
} as const;

/** What of the live view a host serves, read from its `capabilities`. */
export interface ViewFeatures {
  view: boolean;
  cursor: boolean;
  clipboard: boolean;
  menu: boolean;
  viewport: boolean;
  /** A view may open already holding the tab: how a person takes over a tab in secure entry. */
  take: boolean;
}

export function viewFeatures(served: ReadonlySet<string>): ViewFeatures {
  const view = served.has(CAPABILITY.view);
  return {
    view,
    cursor: view && served.has(CAPABILITY.viewCursor),
    clipboard: view && served.has(CAPABILITY.viewClipboard),
    menu: view && served.has(CAPABILITY.viewContextMenu),
    viewport: view && served.has(CAPABILITY.viewViewport),
    take: view && served.has(CAPABILITY.viewTake),
  };
}

/** Every event the host sends, by the names the client uses (checked against the generated union). */
export const EVENT = {
  agentsChanged: 'agents-changed',
  tabsChanged: 'browser-tabs-changed',
  profilesChanged: 'browser-profiles-changed',
  providersChanged: 'providers-changed',
  vaultChanged: 'vault-changed',
  memoriesChanged: 'agent-memories-changed',
  revoked: 'revoked',
  takeoverRequested: 'browser-takeover-requested',
  controlRequested: 'browser-control-requested',
  controlRequestResolved: 'browser-control-request-resolved',
  threadsChanged: 'threads-changed',
  turnStarted: 'turn-started',
  turnWaiting: 'turn-waiting',
  turnRunning: 'turn-running',
  turnText: 'turn-text',
  turnTextReset: 'turn-text-reset',
  toolCallStarted: 'tool-call-started',
  toolCallFinished: 'tool-call-finished',
  turnFinished: 'turn-finished',
  queuedMessageAdded: 'queued-message-added',
  queuedMessageUpdated: 'queued-message-updated',
  queuedMessageTaken: 'queued-message-taken',
  queuedMessageCancelled: 'queued-message-cancelled',
  attentionRequested: 'attention-requested',
  attentionResolved: 'attention-resolved',
  tasksChanged: 'tasks-changed',
  subAgent: 'sub-agent',
  delegationStarted: 'delegation-started',
  routineRunStarted: 'routine-run-started',
  routineRunFinished: 'routine-run-finished',
  notificationCreated: 'notification-created',
  notificationsRead: 'notifications-read',
  mcpServersChanged: 'mcp-servers-changed',
  mcpServerStatus: 'mcp-server-status',
  skillsChanged: 'skills-changed',
} as const satisfies Record<string, EventName>;

// A host event the client has no name for fails the build here.
type Unnamed = Exclude<EventName, (typeof EVENT)[keyof typeof EVENT]>;
export const EVERY_EVENT_NAMED: Unnamed extends never ? true : Unnamed = true;

export interface ViewOptions {
  tabId: string;
  cursor?: boolean;
  menu?: boolean;
  viewport?: { width: number; height: number };
  /** Open holding control: the one view a tab in secure entry admits, for its taker. */
  take?: boolean;
}

/** The `view:` channel label; options ride on it because the host reads them first. */
export function viewLabel(options: ViewOptions): string {
  const query: string[] = [];
  if (options.cursor) query.push('cursor=1');
  if (options.menu) query.push('menu=1');
  if (options.viewport) query.push(`viewport=${clampSide(options.viewport.width)}x${clampSide(options.viewport.height)}`);
  if (options.take) query.push('take=1');
  return VIEW_PREFIX + options.tabId + (query.length ? `?${query.join('&')}` : '');
}

/** The host accepts sides of 200 to 4096 CSS pixels. */
export function clampSide(value: number): number {
  return Math.max(200, Math.min(4096, Math.round(value)));
}

export interface Frame {
  sequence: number;
  width: number;
  height: number;
  capturedAtMs: number;
  jpeg: Uint8Array;
}

/**
 * One binary frame: version, flags, sequence (u32), CSS width and height (u16), capture
 * time (f64 ms), all big-endian, then the JPEG bytes. Anything else is refused.
 */
export function decodeFrame(data: ArrayBuffer): Frame {
  if (data.byteLength < FRAME_HEADER_BYTES) throw new Error('frame too short');
  const view = new DataView(data);
  const version = view.getUint8(0);
  if (version !== FRAME_VERSION) throw new Error(`unknown frame version ${version}`);
  return {
    sequence: view.getUint32(2),
    width: view.getUint16(6),
    height: view.getUint16(8),
    capturedAtMs: view.getFloat64(10),
    jpeg: new Uint8Array(data, FRAME_HEADER_BYTES),
  };
}

/** A host message of a `view:` channel, or null for anything that is not one. */
export function parseHostViewMessage(raw: string): HostViewMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') {
    return null;
  }
  return value as HostViewMessage;
}

/** Pointer and key modifiers as CDP counts them. */
export function modifierBits(event: { altKey: boolean; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean }): number {
  return (event.altKey ? 1 : 0) | (event.ctrlKey ? 2 : 0) | (event.metaKey ? 4 : 0) | (event.shiftKey ? 8 : 0);
}
