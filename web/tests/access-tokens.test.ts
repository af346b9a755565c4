/** Access tokens: the create form's body, states and outcomes in words, and the client snippets. */
import { describe, expect, it } from 'vitest';
import { createBody, endpointUrl, outcomeText, snippets, tokenState } from '../src/access-tokens';

const SECRET = 'crh_pat_' + 'x'.repeat(43);
const TOKEN = {
  id: 'tok-1',
  name: 'Laptop',
  hostId: 'h1',
  accountId: 'a1',
  scope: 'browser',
  createdAt: 1_800_000_000,
  expiresAt: 1_802_592_000,
  lastUsedAt: null,
  revoked: false,
  live: true,
};

describe('the create form', () => {
  it('sends a trimmed name, the host, the scope and the expiry', () => {
    expect(createBody({ name: ' Laptop ', hostId: 'h1', scope: 'browser+agents', expiresInDays: 90 })).toEqual({
      kind: 'send',
      body: { name: 'Laptop', hostId: 'h1', scope: 'browser+agents', expiresInDays: 90 },
    });
  });

  it('refuses what the hub would, in words', () => {
    expect(createBody({ name: ' ', hostId: 'h1', scope: 'browser', expiresInDays: 30 })).toEqual({ kind: 'refused', reason: 'Name the token after what will use it.' });
    expect(createBody({ name: 'x'.repeat(101), hostId: 'h1', scope: 'browser', expiresInDays: 30 })).toMatchObject({ kind: 'refused' });
    expect(createBody({ name: 'Laptop', hostId: '', scope: 'browser', expiresInDays: 30 })).toMatchObject({ kind: 'refused' });
    expect(createBody({ name: 'Laptop', hostId: 'h1', scope: 'browser', expiresInDays: 366 })).toMatchObject({ kind: 'refused' });
  });
});

describe('words', () => {
  it('says whether a token is live, revoked or expired', () => {
    expect(tokenState(TOKEN).key).toBe('live');
    expect(tokenState({ ...TOKEN, revoked: true, live: false })).toEqual({ text: 'Revoked', key: 'revoked' });
    expect(tokenState({ ...TOKEN, live: false })).toEqual({ text: 'Expired', key: 'expired' });
  });

  it('says how a call ended', () => {
    const use = { id: 'u', tokenId: 'tok-1', accountId: 'a1', at: 1, tool: 'click' };
    expect(outcomeText({ ...use, outcome: 'ok' })).toBe('Done');
    expect(outcomeText({ ...use, outcome: 'refused' })).toMatch(/^Refused/);
    expect(outcomeText({ ...use, outcome: 'error' })).toMatch(/error/);
  });
});

describe('client snippets', () => {
  const url = endpointUrl('https://crew.example.com/');
  const [claude, cursor, vscode] = snippets(url, SECRET);

  it('point at this hub’s endpoint', () => {
    expect(url).toBe('https://crew.example.com/v1/mcp');
  });

  it('give Claude Code a command with the bearer header', () => {
    expect(claude!.text).toBe(`claude mcp add --transport http crewhost https://crew.example.com/v1/mcp --header "Authorization: Bearer ${SECRET}"`);
  });

  it('give Cursor its mcpServers file with the address and header', () => {
    expect(cursor!.where).toBe('.cursor/mcp.json');
    expect(JSON.parse(cursor!.text)).toEqual({ mcpServers: { crewhost: { url, headers: { Authorization: `Bearer ${SECRET}` } } } });
  });

  it('give VS Code its servers file of type http', () => {
    expect(vscode!.where).toBe('.vscode/mcp.json');
    expect(JSON.parse(vscode!.text)).toEqual({ servers: { crewhost: { type: 'http', url, headers: { Authorization: `Bearer ${SECRET}` } } } });
  });
});
