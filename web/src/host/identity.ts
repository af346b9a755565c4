/**
 * Proving who answered: the DTLS fingerprint of an SDP, the nonce of a ticket, and the
 * host's Ed25519 signature over its answer, checked with the browser's WebCrypto.
 */

const FINGERPRINT = /^a=fingerprint:sha-256 ([0-9A-Fa-f:]{95})\s*$/gm;

/** The one sha-256 certificate fingerprint of an SDP (upper case); refused if none or several. */
export function sdpFingerprint(sdp: string): string {
  const found = new Set<string>();
  for (const match of sdp.matchAll(FINGERPRINT)) found.add(match[1]!.toUpperCase());
  if (found.size !== 1) throw new Error('the SDP must carry exactly one sha-256 certificate fingerprint');
  return [...found][0]!;
}

export function base64UrlDecode(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('not base64url');
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The nonce the hub put in a ticket (its payload is readable; only its signature is the hub's). */
export function ticketNonce(ticket: string): string {
  const payload = JSON.parse(new TextDecoder().decode(base64UrlDecode(ticket.split('.')[0] ?? ''))) as {
    nonce?: unknown;
  };
  if (typeof payload.nonce !== 'string') throw new Error('the ticket carries no nonce');
  return payload.nonce;
}

/** What the host signs over its answer (the same bytes as the host's `answer_proof`). */
export function answerProof(answerFingerprint: string, nonce: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`crewhost-answer-v1:${answerFingerprint}:${nonce}`);
}

/** Whether `signature` over `message` is by the Ed25519 key `publicKey` (both base64url). */
export async function verifyEd25519(publicKey: string, message: Uint8Array<ArrayBuffer>, signature: string): Promise<boolean> {
  try {
    const key = await crypto.subtle.importKey('raw', base64UrlDecode(publicKey), { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, base64UrlDecode(signature), message);
  } catch {
    return false;
  }
}
