/** One message that cannot be shown leaves the rest of the conversation in place. */
import { act } from 'preact/test-utils';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorBoundary } from '../src/components/ErrorBoundary';
import { ChatPanel, type AgentView } from '../src/components/host/ChatPanel';
import { Markdown } from '../src/components/host/Markdown';
import { ChatMemory } from '../src/host/chat-memory';
import type { HostConnection } from '../src/host/connection';
import { mountPoint, show } from './host-fakes';

const SCOUT = 'a'.repeat(32);
const THREAD = 'd'.repeat(32);

const mount = mountPoint();

function Broken(): never {
  throw new Error('cannot render');
}

describe('the error boundary', () => {
  it('shows the fallback for the message that throws and the others as usual', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    await show(
      <ol>
        <li>
          <ErrorBoundary fallback={<p class="fallback">This message could not be shown</p>}>
            <Broken />
          </ErrorBoundary>
        </li>
        <li>
          <ErrorBoundary fallback={<p class="fallback">This message could not be shown</p>}>
            <Markdown text="**Still here**" />
          </ErrorBoundary>
        </li>
      </ol>,
      mount.element,
    );
    expect(mount.element.querySelectorAll('.fallback')).toHaveLength(1);
    expect(mount.element.querySelector('li')!.textContent).toBe('This message could not be shown');
    expect(mount.element.querySelector('strong')?.textContent).toBe('Still here');
  });
});

describe('a message that could not be shown', () => {
  function Fragile({ text }: { text: string }) {
    if (text.endsWith('**')) throw new Error('half a mark');
    return <p class="shown">{text}</p>;
  }

  it('is tried again when its text goes on, as a streaming reply’s does', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const at = (text: string) => (
      <ErrorBoundary fallback={<p class="fallback">{text}</p>} resetKey={text}>
        <Fragile text={text} />
      </ErrorBoundary>
    );
    await show(at('Half **'), mount.element);
    expect(mount.element.querySelector('.fallback')?.textContent).toBe('Half **');
    await show(at('Half **done**.'), mount.element);
    expect(mount.element.querySelector('.fallback')).toBeNull();
    expect(mount.element.querySelector('.shown')?.textContent).toBe('Half **done**.');
  });
});

describe('a chat with a deeply quoted reply', () => {
  beforeEach(() => vi.stubGlobal('ResizeObserver', class { observe() {} disconnect() {} }));

  it('shows the reply and the messages around it, and a message it cannot show as its text', async () => {
    // Reading this one message throws, as the deep quotes once did.
    const split = String.prototype.split;
    vi.spyOn(String.prototype, 'split').mockImplementation(function (this: string, ...args: Parameters<string['split']>) {
      if (this.startsWith('Broken reply')) throw new RangeError('Maximum call stack size exceeded');
      return split.apply(this, args);
    } as string['split']);
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const contents = {
      thread: { id: THREAD, agentId: SCOUT, createdBy: 'me', shared: false, title: 'Work', createdAt: 1, updatedAt: 1, parentThreadId: null, parentAgentId: null },
      messages: [
        { role: 'user', text: 'Quote it' },
        { role: 'assistant', text: 'Here you go\n\n' + '>'.repeat(6000) },
        { role: 'assistant', text: 'Broken reply **as typed**' },
        { role: 'assistant', text: 'Anything else?' },
      ],
      turns: [],
      runningTurnId: null,
      runningText: '',
      tasks: [],
      queued: [],
      delegations: [],
    };
    const connection = {
      call: vi.fn(async (route: string) => {
        if (route === 'threads-v1/get') return contents;
        if (route === 'threads-v1/list') return { threads: [] };
        return {};
      }),
      onEvent: () => () => {},
    } as unknown as HostConnection;
    const scout: AgentView = { id: SCOUT, name: 'Scout', instructions: '', provider: 'anthropic', model: null, permissions: {}, maxToolCalls: null, ownBrowserSession: false, browserProfileId: null, createdAt: 1, updatedAt: 1, mayAsk: [] };
    await show(
      <ChatPanel
        connection={connection}
        meId="me"
        agents={[scout]}
        agentsError={null}
        memory={new ChatMemory()}
        selection={{ agentId: SCOUT, threadId: THREAD }}
        onSelection={() => {}}
        requests={[]}
        alwaysAllow={null}
        manager={false}
        onWatch={null}
        onProviders={null}
        onBudgets={null}
      />,
      mount.element,
    );
    await act(async () => {});
    const rows = mount.element.querySelectorAll('.chat-agent-text');
    expect(rows).toHaveLength(3);
    expect(rows[0].textContent).toContain('Here you go');
    expect(rows[1].textContent).toBe('Broken reply **as typed**');
    expect(rows[1].querySelector('strong')).toBeNull();
    expect(rows[2].textContent).toBe('Anything else?');
    expect(mount.element.querySelector('.chat-user-body')?.textContent).toBe('Quote it');
  });
});
