/**
 * Every error code the hub's OpenAPI document and the host protocol document declare
 * (`x-error-codes`) has words in `src/errors/messages.ts`, and no server text reaches a person.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/client';
import { describeCode, describeError } from '../src/error-messages';
import { CLIENT_ERROR_CODES, ERROR_MESSAGES, UNKNOWN_ERROR } from '../src/errors/messages';
import { HostCallError, HostSignatureInvalid } from '../src/host/connection';

interface Declared {
  code: string;
  meaning: string;
}

function declared(path: string): Declared[] {
  const document = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { 'x-error-codes'?: Declared[] };
  return document['x-error-codes'] ?? [];
}

const HUB = declared('../src/api/openapi.json');
const HOST = declared('../src/host/protocol.json');

describe('the error message table', () => {
  it('reads the codes both documents declare', () => {
    expect(HUB.map((d) => d.code)).toEqual(expect.arrayContaining(['badCredentials', 'hostOffline', 'ticketRevoked']));
    expect(HOST.map((d) => d.code)).toEqual(expect.arrayContaining(['tabHeld', 'tabHoldsSecret', 'addressRefused', 'threadNotFound']));
  });

  it('has a message for every code the hub declares', () => {
    expect(HUB.map((d) => d.code).filter((code) => !ERROR_MESSAGES.has(code))).toEqual([]);
  });

  it('has a message for every code a host declares', () => {
    expect(HOST.map((d) => d.code).filter((code) => !ERROR_MESSAGES.has(code))).toEqual([]);
  });

  it('keeps no message for a code nobody sends', () => {
    const sent = new Set<string>([...HUB, ...HOST].map((d) => d.code).concat(CLIENT_ERROR_CODES));
    expect([...ERROR_MESSAGES.keys()].filter((code) => !sent.has(code))).toEqual([]);
  });

  it('speaks in sentences', () => {
    for (const [code, message] of ERROR_MESSAGES) {
      expect(message, code).toMatch(/^[A-Z"].*[.!?]$/);
      expect(message, code).not.toContain(code);
    }
  });
});

describe('describeError', () => {
  it('words a host refusal from the table, never with its text', () => {
    const held = new HostCallError('tabHeld', 'another person has control of this tab');
    expect(describeError(held)).toBe(ERROR_MESSAGES.get('tabHeld'));
    expect(describeError(new HostCallError('threadNotFound', 'no such thread'))).toMatch(/^That conversation/);
    expect(describeError(new HostCallError('forbidden', 'threads-v1/share needs the admin role or higher'))).toMatch(/^Your role/);
  });

  it('words the http-only address refusal like a form hint', () => {
    const url = new HostCallError('invalidArgument', "field 'url': Value error, only http and https addresses (or about:blank) can be opened");
    expect(describeError(url)).toBe('Only http and https addresses (or about:blank) can be opened.');
  });

  it('falls back to a general sentence for a code it does not know, without the server text', () => {
    expect(describeError(new HostCallError('somethingNew', 'the raw text'))).toBe(UNKNOWN_ERROR.host);
    expect(describeError(new ApiError(409, 'somethingNew', 'the raw text'))).toBe(UNKNOWN_ERROR.hub);
    expect(describeError(new ApiError(502, 'somethingNew', 'the raw text'))).toBe('The hub ran into a problem. Try again in a moment.');
    expect(describeError(new HostCallError('constructor', 'the raw text'))).toBe(UNKNOWN_ERROR.host);
    expect(describeCode('toString', 'hub')).toBe(UNKNOWN_ERROR.hub);
  });

  it('words the client’s own coded failures and keeps a caller’s fallback for the rest', () => {
    expect(describeError(new HostSignatureInvalid())).toBe(ERROR_MESSAGES.get('hostSignatureInvalid'));
    expect(describeError(new Error('the SDP must carry one fingerprint'), 'The host could not be reached.')).toBe('The host could not be reached.');
  });
});
