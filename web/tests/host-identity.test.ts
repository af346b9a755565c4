// @vitest-environment node
/** Fingerprints, ticket nonces and the host's answer signature, against a vector the host made. */
import { describe, expect, it } from 'vitest';
import { answerProof, sdpFingerprint, ticketNonce, verifyEd25519 } from '../src/host/identity';
import vector from './fixtures/answer-signature.json';

const FP = vector.answerFingerprint;
const sdp = (...lines: string[]) => ['v=0', 'o=- 1 2 IN IP4 127.0.0.1', ...lines, ''].join('\r\n');

describe('sdpFingerprint', () => {
  it('reads the one sha-256 fingerprint, in upper case, even when each section repeats it', () => {
    expect(sdpFingerprint(sdp(`a=fingerprint:sha-256 ${FP.toLowerCase()}`, 'm=application 9 UDP/DTLS/SCTP webrtc-datachannel', `a=fingerprint:sha-256 ${FP}`))).toBe(FP);
  });

  it('refuses none, or two that differ', () => {
    expect(() => sdpFingerprint(sdp('a=setup:actpass'))).toThrow('exactly one');
    const other = FP.replace('00:', 'FF:');
    expect(() => sdpFingerprint(sdp(`a=fingerprint:sha-256 ${FP}`, `a=fingerprint:sha-256 ${other}`))).toThrow('exactly one');
  });
});

describe('the answer signature', () => {
  it('reads the nonce from the ticket', () => {
    expect(ticketNonce(vector.ticket)).toBe(vector.nonce);
    expect(() => ticketNonce('not*base64.sig')).toThrow();
  });

  it('accepts the host’s signature and refuses any change', async () => {
    const proof = answerProof(FP, vector.nonce);
    expect(await verifyEd25519(vector.hostKey, proof, vector.signature)).toBe(true);
    expect(await verifyEd25519(vector.otherKey, proof, vector.signature)).toBe(false);
    expect(await verifyEd25519(vector.hostKey, answerProof(FP, 'another-nonce'), vector.signature)).toBe(false);
    expect(await verifyEd25519(vector.hostKey, proof, 'garbage!')).toBe(false);
  });
});
