/**
 * One authenticated WebRTC connection to a host, with its `team-api` channel.
 *
 * The steps are the Python peer's: make an offer (all ICE candidates gathered, no trickle),
 * ask the hub for a ticket bound to the offer's DTLS fingerprint, send ticket and offer to
 * the hub, check the answer's host key against the pinned one and its signature over the
 * answer's fingerprint and the ticket's nonce, and only then apply it.
 */

import { checkHostKey } from './known-hosts';
import { answerProof, sdpFingerprint, ticketNonce, verifyEd25519 } from './identity';
import { MAX_TEAM_API_MESSAGE, TEAM_API_LABEL, type RouteArgs, type RouteName, type RouteResult, type TeamApiEvent } from './protocol';

/** What the connection needs of the hub (the real one is `hub-signaling.ts`). */
export interface Signaling {
  iceServers(): Promise<RTCIceServer[]>;
  ticket(teamId: string, hostId: string, fingerprint: string): Promise<{ ticket: string; hostKey: string }>;
  connect(teamId: string, hostId: string, ticket: string, sdp: string): Promise<{ sdp: string; signature: string; hostKey: string }>;
}

export type PeerFactory = (config: RTCConfiguration) => RTCPeerConnection;

export class HostCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HostCallError';
  }
}

export class HostSignatureInvalid extends Error {
  readonly code = 'hostSignatureInvalid';

  constructor() {
    super('The answer was not signed by the host. The connection was refused.');
    this.name = 'HostSignatureInvalid';
  }
}

/** Why a connection ended: `revoked` carries the host's code for why (null from a host too old to send one). */
export type CloseReason = { kind: 'closedByUs' } | { kind: 'revoked'; code: string | null } | { kind: 'lost' };

const GATHER_LIMIT_MS = 5000;
const OPEN_LIMIT_MS = 20000;

function gathered(peer: RTCPeerConnection): Promise<void> {
  if (peer.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      if (peer.iceGatheringState !== 'complete') return;
      peer.removeEventListener('icegatheringstatechange', done);
      clearTimeout(timer);
      resolve();
    };
    // With no STUN answer, gathering may hang; the candidates found so far will do.
    const timer = setTimeout(() => {
      peer.removeEventListener('icegatheringstatechange', done);
      resolve();
    }, GATHER_LIMIT_MS);
    peer.addEventListener('icegatheringstatechange', done);
  });
}

function opened(channel: RTCDataChannel, peer: RTCPeerConnection): Promise<void> {
  if (channel.readyState === 'open') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new HostCallError('openTimeout', 'The host did not open the connection in time.')), OPEN_LIMIT_MS);
    channel.addEventListener('open', () => {
      clearTimeout(timer);
      resolve();
    });
    peer.addEventListener('connectionstatechange', () => {
      if (peer.connectionState === 'failed') {
        clearTimeout(timer);
        reject(new HostCallError('noNetworkPath', 'No network path to the host was found.'));
      }
    });
  });
}

let connections = 0;

export class HostConnection {
  /** Tells this connection from the one a reconnect makes (a key for the screen). */
  readonly serial = ++connections;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly eventListeners = new Set<(event: TeamApiEvent) => void>();
  private readonly closeListeners = new Set<(reason: CloseReason) => void>();
  private closeReason: CloseReason | null = null;
  private revokedCode: string | null | undefined = undefined;

  private constructor(
    readonly peer: RTCPeerConnection,
    private readonly channel: RTCDataChannel,
    readonly hostId: string,
  ) {
    channel.addEventListener('message', (event: MessageEvent) => this.onMessage(event.data));
    channel.addEventListener('close', () => this.ended());
    peer.addEventListener('connectionstatechange', () => {
      if (peer.connectionState === 'failed' || peer.connectionState === 'closed') this.ended();
    });
  }

  /** Ticket, offer, pinned and verified answer, open channel: a ready connection. */
  static async open(
    signaling: Signaling,
    teamId: string,
    hostId: string,
    accountId: string,
    createPeer: PeerFactory = (config) => new RTCPeerConnection(config),
  ): Promise<HostConnection> {
    const peer = createPeer({ iceServers: await signaling.iceServers() });
    try {
      const channel = peer.createDataChannel(TEAM_API_LABEL, { ordered: true });
      await peer.setLocalDescription(await peer.createOffer());
      await gathered(peer);
      const offer = peer.localDescription?.sdp ?? '';
      const { grant, answer } = await relayWithTicket(signaling, teamId, hostId, offer);
      checkHostKey(accountId, hostId, answer.hostKey);
      const proof = answerProof(sdpFingerprint(answer.sdp), ticketNonce(grant.ticket));
      if (!(await verifyEd25519(answer.hostKey, proof, answer.signature))) throw new HostSignatureInvalid();
      await peer.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
      const connection = new HostConnection(peer, channel, hostId);
      await opened(channel, peer);
      return connection;
    } catch (error) {
      peer.close();
      throw error;
    }
  }

  get closed(): CloseReason | null {
    return this.closeReason;
  }

  /** Call a Team API route; the answer's type is the route's result model. */
  call<N extends RouteName>(route: N, args: RouteArgs<N>, timeoutMs = 30000): Promise<RouteResult<N>> {
    if (this.closeReason) return Promise.reject(new HostCallError('disconnected', 'The connection to the host is closed.'));
    const id = this.nextId++;
    const body = JSON.stringify({ id, route, args });
    if (body.length > MAX_TEAM_API_MESSAGE) {
      return Promise.reject(new HostCallError('messageTooLarge', 'That request is too large for the host.'));
    }
    return new Promise<RouteResult<N>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new HostCallError('timeout', 'The host did not answer in time.'));
      }, timeoutMs);
      this.waiting.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as RouteResult<N>);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.channel.send(body);
    });
  }

  onEvent(listener: (event: TeamApiEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onClose(listener: (reason: CloseReason) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** A further data channel on the same connection (a `view:` channel). */
  createChannel(label: string): RTCDataChannel {
    const channel = this.peer.createDataChannel(label, { ordered: true });
    channel.binaryType = 'arraybuffer';
    return channel;
  }

  close(): void {
    this.ended({ kind: 'closedByUs' });
    this.peer.close();
  }

  private onMessage(raw: unknown): void {
    if (typeof raw !== 'string') return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    const record = message as Record<string, unknown>;
    if (typeof record.event === 'string') {
      if (record.event === 'revoked') {
        const data = record.data as { code?: unknown } | null;
        this.revokedCode = typeof data?.code === 'string' ? data.code : null;
      }
      for (const listener of [...this.eventListeners]) listener({ event: record.event, data: record.data });
      return;
    }
    const waiter = typeof record.id === 'number' ? this.waiting.get(record.id) : undefined;
    if (!waiter) return;
    this.waiting.delete(record.id as number);
    const error = record.error as { code?: unknown; message?: unknown } | undefined;
    if (error) waiter.reject(new HostCallError(String(error.code), String(error.message)));
    else waiter.resolve(record.result);
  }

  private ended(reason?: CloseReason): void {
    if (this.closeReason) return;
    this.closeReason =
      reason ?? (this.revokedCode !== undefined ? { kind: 'revoked', code: this.revokedCode } : { kind: 'lost' });
    for (const waiter of this.waiting.values()) waiter.reject(new HostCallError('disconnected', 'The connection to the host closed.'));
    this.waiting.clear();
    for (const listener of [...this.closeListeners]) listener(this.closeReason);
  }
}

/**
 * A ticket for the offer, then the offer relayed with it. A host refuses a ticket issued
 * before its current link to the hub began (it restarted between the two), and the hub
 * refuses one issued before a role change: either way one fresh ticket is what the refusal
 * asks for, and the hub checks the caller's access again when it issues that ticket.
 */
async function relayWithTicket(signaling: Signaling, teamId: string, hostId: string, offer: string) {
  for (let attempt = 0; ; attempt++) {
    const grant = await signaling.ticket(teamId, hostId, sdpFingerprint(offer));
    try {
      return { grant, answer: await signaling.connect(teamId, hostId, grant.ticket, offer) };
    } catch (error) {
      if (attempt > 0 || (error as { code?: unknown }).code !== 'ticketRevoked') throw error;
    }
  }
}
