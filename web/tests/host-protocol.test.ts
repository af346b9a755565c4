// @vitest-environment node
/**
 * The client's host protocol against the host's own document: the generated types are
 * current, the constants are the host's, and frames and labels are read and built the way
 * the host writes and reads them.
 */
import { readFileSync } from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import packageJson from '../package.json';
import { PROFILE_HUES } from '../src/components/host/ProfilesPanel';
import { DENIED_FOR_MODEL, DENIED_FOR_PEOPLE } from '../src/host/chat-stream';
import {
  FRAME_HEADER_BYTES,
  FRAME_VERSION,
  MAX_CLIPBOARD,
  MAX_TEAM_API_MESSAGE,
  PROTOCOL_VERSION,
  TEAM_API_LABEL,
  VIEW_PREFIX,
  clampSide,
  decodeFrame,
  modifierBits,
  parseHostViewMessage,
  viewLabel,
} from '../src/host/protocol';

// Regenerating the types parses the whole document: slow on a busy two-core machine.
const GENERATION_TIMEOUT_MS = 30_000;

const SPEC_URL = new URL('../src/host/protocol.json', import.meta.url);
const spec = JSON.parse(readFileSync(SPEC_URL, 'utf8')) as { 'x-constants': Record<string, unknown>; paths: Record<string, unknown> };

function frame(version: number, sequence: number, width: number, height: number, captured: number, jpeg: number[]): ArrayBuffer {
  const buffer = new ArrayBuffer(FRAME_HEADER_BYTES + jpeg.length);
  const view = new DataView(buffer);
  view.setUint8(0, version);
  view.setUint8(1, 0);
  view.setUint32(2, sequence);
  view.setUint16(6, width);
  view.setUint16(8, height);
  view.setFloat64(10, captured);
  new Uint8Array(buffer, FRAME_HEADER_BYTES).set(jpeg);
  return buffer;
}

describe('what the host stores for the model', () => {
  it('is the sentence the chat reads back as the live card’s words', () => {
    // The host's constant and its live summary, read from its source (no document declares them).
    const source = readFileSync(new URL('../../server/host/agents/turn_loop.py', import.meta.url), 'utf8');
    expect(source).toContain(`DENIED = ${JSON.stringify(DENIED_FOR_MODEL)}`);
    expect(source).toContain(`"refused", ${JSON.stringify(DENIED_FOR_PEOPLE)}`);
  });
});

describe('the host protocol document', () => {
  it('gen:host uses the options this test regenerates with', () => {
    expect(packageJson.scripts['gen:host']).toBe(
      'openapi-typescript src/host/protocol.json --output src/host/schema.d.ts --default-non-nullable=false',
    );
  });

  it('schema.d.ts matches protocol.json', async () => {
    const ast = await openapiTS(SPEC_URL, { defaultNonNullable: false, silent: true });
    const committed = readFileSync(new URL('../src/host/schema.d.ts', import.meta.url), 'utf8');
    expect(`${COMMENT_HEADER}${astToString(ast)}` === committed, 'schema.d.ts is stale: run `npm run gen:host`').toBe(true);
  }, GENERATION_TIMEOUT_MS);

  it('the constants are the host’s', () => {
    expect(spec['x-constants']).toEqual({
      protocol: PROTOCOL_VERSION,
      teamApiLabel: TEAM_API_LABEL,
      maxTeamApiMessage: MAX_TEAM_API_MESSAGE,
      viewPrefix: VIEW_PREFIX,
      frameVersion: FRAME_VERSION,
      frameHeaderBytes: FRAME_HEADER_BYTES,
      maxClipboard: MAX_CLIPBOARD,
      profileHues: [...PROFILE_HUES],
    });
  });

  it('names the routes the client calls', () => {
    for (const route of ['capabilities', 'host-v1/whoami', 'browser-control-v1/list_tabs', 'browser-profiles-v1/create']) {
      expect(spec.paths).toHaveProperty([`/${route}`]);
    }
  });
});

describe('frames', () => {
  it('reads the header and keeps the JPEG bytes', () => {
    const decoded = decodeFrame(frame(1, 4_000_000_001, 1280, 800, 1_764_000_000_123.5, [0xff, 0xd8, 0x01]));
    expect(decoded).toMatchObject({ sequence: 4_000_000_001, width: 1280, height: 800, capturedAtMs: 1_764_000_000_123.5 });
    expect([...decoded.jpeg]).toEqual([0xff, 0xd8, 0x01]);
  });

  it('refuses a short frame and an unknown version', () => {
    expect(() => decodeFrame(new ArrayBuffer(10))).toThrow('too short');
    expect(() => decodeFrame(frame(2, 1, 10, 10, 0, []))).toThrow('unknown frame version 2');
  });
});

describe('view labels and messages', () => {
  it('builds the label the host parses, with the viewport clamped to what it accepts', () => {
    const tabId = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(viewLabel({ tabId })).toBe(`view:${tabId}`);
    expect(viewLabel({ tabId, cursor: true, menu: true, viewport: { width: 1279.6, height: 120 } })).toBe(
      `view:${tabId}?cursor=1&menu=1&viewport=1280x200`,
    );
    expect(viewLabel({ tabId, take: true })).toBe(`view:${tabId}?take=1`);
    expect(clampSide(99999)).toBe(4096);
  });

  it('reads host messages and drops what is not one', () => {
    expect(parseHostViewMessage('{"type":"held","byYou":true}')).toEqual({ type: 'held', byYou: true });
    expect(parseHostViewMessage('not json')).toBeNull();
    expect(parseHostViewMessage('[1,2]')).toBeNull();
    expect(parseHostViewMessage('{"no":"type"}')).toBeNull();
  });

  it('counts modifiers as the host does (alt 1, ctrl 2, meta 4, shift 8)', () => {
    expect(modifierBits({ altKey: true, ctrlKey: false, metaKey: true, shiftKey: true })).toBe(13);
    expect(modifierBits({ altKey: false, ctrlKey: true, metaKey: false, shiftKey: false })).toBe(2);
  });
});
