/**
 * Connecting to a host with a stand-in RTCPeerConnection (jsdom has none; the end-to-end
 * tests use Chromium's real one): the ticket is bound to the offer, the answer must carry the
 * pinned key and the host's signature, and calls, events and revocation reach the caller.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { HostCallError, HostConnection, HostSignatureInvalid, type CloseReason, type Signaling } from '../src/host/connection';
import { HostKeyChanged } from '../src/host/known-hosts';
import { ApiError } from '../src/api/client';
import vector from './fixtures/answer-signature.json';

const OFFER_FP = Array.from({ length: 32 }, () => 'AA').join(':');
const sdpWith = (fingerprint: string) => `v=0\r\na=fingerprint:sha-256 ${fingerprint}\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n`;

class FakeChannel extends EventTarget {
  readyState: RTCDataChannelState = 'connecting';
  binaryType = 'blob';
  readonly sent: string[] = [];

  constructor(readonly label: string) {
    super();
  }

  send(data: string) {
    this.sent.push(data);
  }

  open() {
    this.readyState = 'open';
    this.dispatchEvent(new Event('open'));
  }

  receive(message: unknown) {
    this.dispatchEvent(new MessageEvent('message', { data: JSON.stringify(message) }));
  }

  close() {
    if (this.readyState === 'closed') return;
    this.readyState = 'closed';
    this.dispatchEvent(new Event('close'));
  }
}

class FakePeer extends EventTarget {
  iceGatheringState: RTCIceGatheringState = 'complete';
  connectionState: RTCPeerConnectionState = 'new';
  localDescription: RTCSessionDescriptionInit | null = null;
  remoteDescription: RTCSessionDescriptionInit | null = null;
  readonly channels: FakeChannel[] = [];

  createDataChannel(label: string) {
    const channel = new FakeChannel(label);
    this.channels.push(channel);
    return channel;
  }

  async createOffer() {
    return { type: 'offer' as const, sdp: sdpWith(OFFER_FP) };
  }

  async setLocalDescription(description: RTCSessionDescriptionInit) {
    this.localDescription = description;
  }

  async setRemoteDescription(description: RTCSessionDescriptionInit) {
    this.remoteDescription = description;
    queueMicrotask(() => this.channels[0]?.open());
  }

  close() {
    this.connectionState = 'closed';
    this.dispatchEvent(new Event('connectionstatechange'));
  }
}

interface Recorded {
  fingerprint?: string;
  offer?: string;
}

function signaling(recorded: Recorded, answer: Partial<{ signature: string; hostKey: string }> = {}): Signaling {
  return {
    iceServers: async () => [],
    ticket: async (_team, _host, fingerprint) => {
      recorded.fingerprint = fingerprint;
      return { ticket: vector.ticket, hostKey: vector.hostKey };
    },
    connect: async (_team, _host, ticket, sdp) => {
      expect(ticket).toBe(vector.ticket);
      recorded.offer = sdp;
      return { sdp: sdpWith(vector.answerFingerprint), signature: vector.signature, hostKey: vector.hostKey, ...answer };
    },
  };
}

let peer: FakePeer;
const createPeer = () => {
  peer = new FakePeer();
  return peer as unknown as RTCPeerConnection;
};

beforeEach(() => localStorage.clear());

describe('HostConnection.open', () => {
  it('binds the ticket to the offer and opens once the signed answer checks out', async () => {
    const recorded: Recorded = {};
    const connection = await HostConnection.open(signaling(recorded), 't', 'h', 'account-1', createPeer);
    expect(recorded.fingerprint).toBe(OFFER_FP);
    expect(recorded.offer).toBe(sdpWith(OFFER_FP));
    expect(peer.remoteDescription?.sdp).toBe(sdpWith(vector.answerFingerprint));
    expect(peer.channels[0]?.label).toBe('team-api');
    expect(connection.closed).toBeNull();
  });

  it('refuses an answer the host did not sign, and closes the peer', async () => {
    const forged = signaling({}, { signature: vector.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) });
    await expect(HostConnection.open(forged, 't', 'h', 'account-1', createPeer)).rejects.toBeInstanceOf(HostSignatureInvalid);
    expect(peer.connectionState).toBe('closed');
    expect(peer.remoteDescription).toBeNull();
  });

  it('refuses a host whose key changed since it was pinned for this account', async () => {
    await HostConnection.open(signaling({}), 't', 'h', 'account-1', createPeer);
    const swapped = signaling({}, { hostKey: vector.otherKey });
    const refusal = HostConnection.open(swapped, 't', 'h', 'account-1', createPeer);
    await expect(refusal).rejects.toBeInstanceOf(HostKeyChanged);
    expect(peer.remoteDescription).toBeNull();
    // Another account has pinned nothing yet; the signature still decides.
    await expect(HostConnection.open(swapped, 't', 'h', 'account-2', createPeer)).rejects.toBeInstanceOf(HostSignatureInvalid);
  });

  it('asks for one new ticket when the host refuses the first as revoked, and no more', async () => {
    const revoked = () => new ApiError(403, 'ticketRevoked', 'the ticket was issued before this host linked');
    const once = signaling({});
    let tickets = 0;
    let refusals = 1;
    const relinked: Signaling = {
      ...once,
      ticket: (...args) => {
        tickets += 1;
        return once.ticket(...args);
      },
      connect: (...args) => (refusals-- > 0 ? Promise.reject(revoked()) : once.connect(...args)),
    };
    const connection = await HostConnection.open(relinked, 't', 'h', 'account-1', createPeer);
    expect(tickets).toBe(2);
    expect(connection.closed).toBeNull();

    refusals = 2;
    tickets = 0;
    await expect(HostConnection.open(relinked, 't', 'h', 'account-1', createPeer)).rejects.toMatchObject({ code: 'ticketRevoked' });
    expect(tickets).toBe(2);
    expect(peer.connectionState).toBe('closed');
  });
});

describe('the team-api channel', () => {
  it('answers calls by id, delivers events, and rejects with the host’s error code', async () => {
    const connection = await HostConnection.open(signaling({}), 't', 'h', 'account-1', createPeer);
    const channel = peer.channels[0]!;
    const events: string[] = [];
    connection.onEvent((event) => events.push(event.event));

    const listed = connection.call('browser-control-v1/list_tabs', {});
    const refused = connection.call('browser-profiles-v1/create', { name: 'Work' });
    const [first, second] = channel.sent.map((raw) => JSON.parse(raw) as { id: number; route: string; args: unknown });
    expect(first).toEqual({ id: 1, route: 'browser-control-v1/list_tabs', args: {} });
    expect(second).toEqual({ id: 2, route: 'browser-profiles-v1/create', args: { name: 'Work' } });

    channel.receive({ id: 2, error: { code: 'forbidden', message: 'admins only' } });
    channel.receive({ event: 'browser-tabs-changed', data: {} });
    channel.receive({ id: 1, result: { tabs: [] } });
    await expect(listed).resolves.toEqual({ tabs: [] });
    await expect(refused).rejects.toMatchObject({ code: 'forbidden', message: 'admins only' });
    expect(events).toEqual(['browser-tabs-changed']);
  });

  it('says why it closed: revoked with the host’s code, and pending calls fail', async () => {
    const connection = await HostConnection.open(signaling({}), 't', 'h', 'account-1', createPeer);
    const reasons: CloseReason[] = [];
    connection.onClose((reason) => reasons.push(reason));
    const pending = connection.call('capabilities', {});
    peer.channels[0]!.receive({ event: 'revoked', data: { code: 'roleChanged', reason: 'the role changed' } });
    peer.channels[0]!.close();
    expect(reasons).toEqual([{ kind: 'revoked', code: 'roleChanged' }]);
    await expect(pending).rejects.toBeInstanceOf(HostCallError);
    await expect(connection.call('capabilities', {})).rejects.toMatchObject({ code: 'disconnected' });
  });

  it('refuses to send a request above the host’s message limit', async () => {
    const connection = await HostConnection.open(signaling({}), 't', 'h', 'account-1', createPeer);
    await expect(connection.call('browser-control-v1/new_tab', { url: `https://example.com/${'a'.repeat(300_000)}` })).rejects.toMatchObject({
      code: 'messageTooLarge',
    });
    expect(peer.channels[0]!.sent).toEqual([]);
  });
});
