/** The team webhooks screen: adding one shows its secret once, the address leaves its input, a test event and the delivery log; members see why they see nothing. */
import { act } from 'preact/test-utils';
import { describe, expect, it } from 'vitest';
import { TeamWebhooksAdmin, deliveryLine, kindNames, updateBody } from '../src/components/host/TeamWebhooksAdmin';
import { button, fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';

const WEBHOOK = {
  id: 'a'.repeat(32),
  name: 'Ops channel',
  url: 'https://hooks.slack.com/••••',
  kinds: ['run.failed', 'approval.waiting'],
  bodyFormat: 'slack',
  enabled: true,
  createdAt: 1_800_000_000,
  updatedAt: 1_800_000_000,
};
const DELIVERED = {
  id: 'msg_1',
  kind: 'webhook.test',
  status: 'delivered',
  attempts: 1,
  lastStatus: 204,
  lastError: null,
  nextAttemptAt: null,
  createdAt: 1_800_000_000,
  updatedAt: 1_800_000_000,
};
const PENDING = { ...DELIVERED, id: 'msg_2', kind: 'run.failed', status: 'pending', attempts: 2, lastStatus: 500, lastError: 'answered HTTP 500', nextAttemptAt: 1_800_000_600 };

const mount = mountPoint();

describe('delivery words', () => {
  it('names kinds and says how a delivery went', () => {
    expect(kindNames(['run.finished', 'approval.waiting', 'webhook.test'])).toBe('Run finished, Approval waiting, Test event');
    expect(deliveryLine(DELIVERED)).toBe('1 attempt, last answer HTTP 204');
    expect(deliveryLine(PENDING)).toMatch(/^2 attempts, last answer HTTP 500, next try /);
    expect(deliveryLine({ ...PENDING, lastStatus: null, lastError: 'the connection failed', nextAttemptAt: null, status: 'failed' })).toBe('2 attempts, the connection failed');
  });
});

describe('edit bodies', () => {
  it('send only what changed, and an empty address keeps the sealed one', () => {
    const same = { name: WEBHOOK.name, url: '', kinds: [...WEBHOOK.kinds], bodyFormat: 'slack' as const };
    expect(updateBody(WEBHOOK, same)).toBeNull();
    expect(updateBody(WEBHOOK, { ...same, kinds: ['approval.waiting', 'run.finished'] })).toEqual({ id: WEBHOOK.id, kinds: ['run.finished', 'approval.waiting'] });
    expect(updateBody(WEBHOOK, { ...same, name: ' Ops ', url: ' https://chat.example/hooks/x ', bodyFormat: 'standard' })).toEqual({ id: WEBHOOK.id, name: 'Ops', url: 'https://chat.example/hooks/x', bodyFormat: 'standard' });
  });
});

describe('TeamWebhooksAdmin', () => {
  it('edits a webhook with only what changed', async () => {
    const { connection, calls } = fakeConnection({ 'team-webhooks-v1/list': { webhooks: [WEBHOOK] }, 'team-webhooks-v1/update': WEBHOOK });
    await show(<TeamWebhooksAdmin connection={connection} role="admin" />, mount.element);
    await act(async () => button(mount.element, 'Edit').click());
    const form = mount.element.querySelector<HTMLFormElement>(`form[aria-label="Edit ${WEBHOOK.name}"]`)!;
    expect(form.querySelector<HTMLInputElement>('input[type="url"]')!.value).toBe('');
    await typeInto(form.querySelector<HTMLInputElement>('input[type="text"]')!, 'Ops room');
    await submit(form);
    expect(calls).toContainEqual(['team-webhooks-v1/update', { id: WEBHOOK.id, name: 'Ops room' }]);
    expect(mount.element.querySelector(`form[aria-label="Edit ${WEBHOOK.name}"]`)).toBeNull();
  });

  it('adds a webhook, shows its secret once and empties the address it sent', async () => {
    const answers: Record<string, unknown> = { 'team-webhooks-v1/list': { webhooks: [] }, 'team-webhooks-v1/create': { webhook: WEBHOOK, secret: 'whsec_c2VjcmV0' } };
    const { connection, calls } = fakeConnection(answers);
    await show(<TeamWebhooksAdmin connection={connection} role="admin" />, mount.element);
    const form = mount.element.querySelector<HTMLFormElement>('form[aria-label="Add a webhook"]')!;
    await typeInto(form.querySelector<HTMLInputElement>('input[type="text"]')!, 'Ops channel');
    await typeInto(form.querySelector<HTMLInputElement>('input[type="url"]')!, 'https://hooks.slack.com/services/T0/B0/token');
    await typeInto(form.querySelector<HTMLSelectElement>('select')!, 'slack', 'change');
    answers['team-webhooks-v1/list'] = { webhooks: [WEBHOOK] };
    await submit(form);
    await act(async () => {});
    expect(calls).toContainEqual(['team-webhooks-v1/create', { name: 'Ops channel', url: 'https://hooks.slack.com/services/T0/B0/token', kinds: ['run.failed', 'approval.waiting'], bodyFormat: 'slack' }]);
    expect(form.querySelector<HTMLInputElement>('input[type="url"]')!.value).toBe('');
    expect(mount.element.querySelector<HTMLInputElement>('#webhook-secret')!.value).toBe('whsec_c2VjcmV0');
    expect(mount.element.textContent).toContain('https://hooks.slack.com/••••');
    expect(mount.element.innerHTML).not.toContain('token');
    await act(async () => button(mount.element, 'Done').click());
    expect(mount.element.querySelector('#webhook-secret')).toBeNull();
  });

  it('sends a test event and shows the delivery log', async () => {
    const { connection, calls } = fakeConnection({
      'team-webhooks-v1/list': { webhooks: [WEBHOOK] },
      'team-webhooks-v1/test': DELIVERED,
      'team-webhooks-v1/deliveries': { deliveries: [PENDING, DELIVERED] },
    });
    await show(<TeamWebhooksAdmin connection={connection} role="owner" />, mount.element);
    await act(async () => button(mount.element, 'Send a test event').click());
    expect(calls).toContainEqual(['team-webhooks-v1/test', { id: WEBHOOK.id }]);
    expect(mount.element.textContent).toContain('The test event was delivered.');
    await act(async () => button(mount.element, 'Delivery log').click());
    await act(async () => {});
    const rows = mount.element.querySelectorAll('[data-delivery]');
    expect([...rows].map((row) => row.getAttribute('data-status'))).toEqual(['pending', 'delivered']);
    expect(rows[0]!.textContent).toContain('last answer HTTP 500');
  });

  it('makes a new secret after a question and shows it once', async () => {
    const { connection, calls } = fakeConnection({
      'team-webhooks-v1/list': { webhooks: [WEBHOOK] },
      'team-webhooks-v1/rotate_secret': { secret: 'whsec_bmV3', previousValidUntil: 1_800_086_400 },
    });
    await show(<TeamWebhooksAdmin connection={connection} role="admin" />, mount.element);
    await act(async () => button(mount.element, 'New secret').click());
    expect(mount.element.textContent).toContain('The current one keeps signing for a day');
    expect(calls.map(([route]) => route)).not.toContain('team-webhooks-v1/rotate_secret');
    const confirm = mount.element.querySelector<HTMLButtonElement>('.confirm .btn-danger-solid')!;
    await act(async () => confirm.click());
    expect(calls).toContainEqual(['team-webhooks-v1/rotate_secret', { id: WEBHOOK.id }]);
    expect(mount.element.querySelector<HTMLInputElement>('#webhook-secret')!.value).toBe('whsec_bmV3');
    expect(mount.element.textContent).toContain('the one before it also signs for a day');
  });

  it('tells members why they see no webhooks, and asks the host nothing', async () => {
    const { connection, calls } = fakeConnection({});
    await show(<TeamWebhooksAdmin connection={connection} role="member" />, mount.element);
    expect(mount.element.textContent).toContain('Only admins and owners manage');
    expect(calls).toEqual([]);
  });
});
