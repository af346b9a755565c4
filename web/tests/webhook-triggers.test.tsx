/** A routine's webhook triggers: the secret shown once with a signing example, rotate and delete. */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { act } from 'preact/test-utils';
import { describe, expect, it } from 'vitest';
import { WebhookTriggers } from '../src/components/host/WebhookTriggers';
import { curlExample, eventTypesFrom, hookUrl } from '../src/host/hook-sender';
import { button, fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';

const ROUTINE = '8'.repeat(32);
const HOOK = {
  id: 'a'.repeat(32),
  routineId: ROUTINE,
  path: `/v1/hooks/${'a'.repeat(32)}`,
  filters: { equals: [], eventTypes: ['build.failed'], eventTypeField: 'type' },
  enabled: true,
  createdBy: '9'.repeat(32),
  createdAt: 1,
  rotatedAt: null,
  previousSecretUntil: null,
};
const SECRET = 'whsec_' + Buffer.from('k'.repeat(32)).toString('base64');

describe('the sender’s example', () => {
  it('joins the hub’s origin and the path', () => {
    expect(hookUrl('https://crew.example.com/', HOOK.path)).toBe(`https://crew.example.com${HOOK.path}`);
    expect(eventTypesFrom(' build.failed, ,push ')).toEqual(['build.failed', 'push']);
  });

  it('signs as Standard Webhooks does', () => {
    // Run the example's signing line in a real shell, with curl replaced by echo.
    const script = curlExample('http://127.0.0.1:9/x', SECRET)
      .replace('ID="msg_$(date +%s%N)"; TS=$(date +%s)', 'ID=msg_1; TS=1700000000')
      .replace('curl -sS', 'echo');
    const out = execFileSync('sh', ['-c', script], { encoding: 'utf8' });
    const expected = createHmac('sha256', Buffer.from('k'.repeat(32)))
      .update('msg_1.1700000000.{"type":"test.ping"}')
      .digest('base64');
    expect(out).toContain(`webhook-signature: v1,${expected}`);
  });
});

const mount = mountPoint();

describe('WebhookTriggers', () => {
  it('shows a new trigger’s secret once, with its URL and a signing example', async () => {
    const { connection, calls } = fakeConnection({
      'routines-v1/hooks-list': { hooks: [] },
      'routines-v1/hooks-create': { hook: HOOK, secret: SECRET },
    });
    await show(<WebhookTriggers connection={connection} routineId={ROUTINE} hubOrigin="https://crew.example.com" />, mount.element);
    const root = mount.element;
    expect(root.textContent).toContain('No triggers yet.');
    await typeInto(root.querySelector<HTMLInputElement>('form input')!, 'build.failed, push');
    await submit(root.querySelector('form')!);
    await act(async () => {});
    expect(calls).toContainEqual([
      'routines-v1/hooks-create',
      { routineId: ROUTINE, filters: { equals: [], eventTypes: ['build.failed', 'push'], eventTypeField: 'type' }, enabled: true },
    ]);
    const values = [...root.querySelectorAll<HTMLInputElement>('input[readonly]')].map((i) => i.value);
    expect(values).toEqual([`https://crew.example.com${HOOK.path}`, SECRET]);
    expect(root.querySelector('pre')!.textContent).toContain(`SECRET='${SECRET}'`);
    expect(root.textContent).toContain('shown this once');
    await act(async () => button(root, 'I have saved it').click());
    expect(root.innerHTML).not.toContain(SECRET);
  });

  it('rotates and deletes a listed trigger, never showing a secret it was not just given', async () => {
    const { connection, calls } = fakeConnection({
      'routines-v1/hooks-list': { hooks: [HOOK] },
      'routines-v1/hooks-rotate': { hook: { ...HOOK, previousSecretUntil: 86400 }, secret: SECRET },
      'routines-v1/hooks-delete': { deleted: true },
    });
    await show(<WebhookTriggers connection={connection} routineId={ROUTINE} hubOrigin="https://crew.example.com" />, mount.element);
    const root = mount.element;
    expect(root.textContent).toContain('build.failed');
    expect(root.innerHTML).not.toContain('whsec_');
    await act(async () => button(root, 'New secret').click());
    await act(async () => {});
    expect(calls).toContainEqual(['routines-v1/hooks-rotate', { hookId: HOOK.id }]);
    expect(root.querySelector('pre')!.textContent).toContain(SECRET);
    await act(async () => button(root, 'Delete').click());
    await act(async () => button(root, 'Delete').click());
    await act(async () => {});
    expect(calls).toContainEqual(['routines-v1/hooks-delete', { hookId: HOOK.id }]);
  });

  it('says why a refusal happened', async () => {
    const { connection } = fakeConnection({ 'routines-v1/hooks-list': { hooks: [] } }, { 'routines-v1/hooks-create': 'tooManyHooks' });
    await show(<WebhookTriggers connection={connection} routineId={ROUTINE} />, mount.element);
    await submit(mount.element.querySelector('form')!);
    await act(async () => {});
    expect(mount.element.textContent).toContain('as many webhook triggers as it may');
  });
});
