/** The hub's half of connecting: ICE servers, tickets and the offer relay, over HTTPS. */

import { getRtcConfig, issueTicket, listHosts, relayOffer } from '../api/endpoints';
import type { Signaling } from './connection';

export const hubSignaling: Signaling = {
  async iceServers() {
    const config = await getRtcConfig();
    return config.iceServers.map((server) => ({
      urls: server.urls,
      ...(server.username ? { username: server.username } : {}),
      ...(server.credential ? { credential: server.credential } : {}),
    }));
  },
  ticket: (teamId, hostId, fingerprint) => issueTicket(teamId, hostId, fingerprint),
  connect: (teamId, hostId, ticket, sdp) => relayOffer(teamId, hostId, ticket, sdp),
};

/** Whether the hub still lists the host as online for this team (so reconnecting can work). */
export async function hostStillListed(teamId: string, hostId: string): Promise<boolean> {
  try {
    const { hosts } = await listHosts(teamId);
    return hosts.some((host) => host.id === hostId && host.online);
  } catch {
    return false;
  }
}
