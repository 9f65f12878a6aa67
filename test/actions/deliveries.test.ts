import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { testServer, type TestServer } from '../support/server.ts';
import { startReceiver, trustInThisProcess, until, type Receiver } from './receiver.ts';

// Event deliveries to action targets (docs/actions.md), from a server in
// this process to HTTPS receivers started here, every signature checked.

let server: TestServer;
const receivers: Receiver[] = [];

before(async () => {
  trustInThisProcess();
  server = await testServer({ env: { ACTIONS_RETRY_DELAY: '1', ACTIONS_RETRY_MAX_DELAY: '1' } });
});

after(async () => {
  await server?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  for (const receiver of receivers) {
    assert.equal(receiver.checked, receiver.attempts.length);
    assert.deepEqual(receiver.badSignatures, [], 'every request carried a valid signature');
  }
});

let userCount = 0;
async function addHuman(): Promise<string> {
  userCount += 1;
  const res = await server.api('POST', '/management/v1/users/human', {
    body: {
      userName: `action-user-${userCount}`,
      profile: { firstName: 'Ada', lastName: `Nr ${userCount}` },
      email: { email: `action-user-${userCount}@example.com`, isEmailVerified: true },
    },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.userId;
}

/** A receiver and a webhook target pointing at it, its signing key handed to the receiver. */
async function targetWithReceiver(name: string): Promise<{ id: string; receiver: Receiver }> {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const res = await server.api('POST', '/v2beta/actions/targets', {
    body: { name, endpoint: receiver.url, timeout: '5s', restWebhook: { interruptOnError: false } },
  });
  assert.equal(res.status, 200, res.text);
  assert.match(res.body.signingKey, /^[A-Za-z0-9_-]{43}$/);
  receiver.key = res.body.signingKey;
  return { id: res.body.id, receiver };
}

async function setExecution(condition: unknown, targets: string[]): Promise<void> {
  const res = await server.api('PUT', '/v2beta/actions/executions', { body: { condition, targets: targets.map((target) => ({ target })) } });
  assert.equal(res.status, 200, res.text);
}

const deliveredTypes = (receiver: Receiver) => receiver.deliveries.map((d) => d.body.event_type);
const deliveredUsers = (receiver: Receiver) => receiver.deliveries.filter((d) => d.body.event_type === 'user.human.added').map((d) => d.body.aggregateID);

describe('event deliveries', () => {
  it('POSTs a user event with the documented body, only for events written after the execution was set', async () => {
    const { id, receiver } = await targetWithReceiver('user-added');
    const before = await addHuman();
    await setExecution({ event: { event: 'user.human.added' } }, [id]);
    const userId = await addHuman();
    await until(
      () => receiver.deliveries.length,
      (n) => n >= 1,
      'the user event',
    );
    const [delivery] = receiver.deliveries;
    const body = delivery!.body;
    assert.deepEqual(Object.keys(body).sort(), [
      'aggregateID',
      'aggregateType',
      'created_at',
      'event_payload',
      'event_type',
      'instanceID',
      'resourceOwner',
      'sequence',
      'userID',
      'version',
    ]);
    assert.equal(body.aggregateID, userId);
    assert.notEqual(body.aggregateID, before);
    assert.equal(body.aggregateType, 'user');
    assert.equal(body.event_type, 'user.human.added');
    assert.equal(body.version, 'v1');
    assert.equal(typeof body.sequence, 'number');
    assert.ok(!Number.isNaN(Date.parse(body.created_at)));
    assert.equal(body.event_payload.userName, 'action-user-2');
    assert.ok(body.resourceOwner && body.instanceID && body.userID);
    // The event is the one the log holds at that position.
    const logged = await server.api('POST', '/admin/v1/events/_search', { body: { queries: [{ aggregateIdQuery: { id: userId } }] } });
    const event = logged.body.result.find((e: { type: string }) => e.type === 'user.human.added');
    assert.equal(String(body.sequence), event.sequence);
    // Adding a user writes more events after this one (its invitation code): the cursor passes them too.
    const state = await until(
      () => server.api('GET', `/v2beta/actions/targets/${id}/state`),
      (res) => typeof res.body.sequence === 'string' && BigInt(res.body.sequence) >= BigInt(body.sequence),
      'the cursor at or past the delivered event',
    );
    assert.deepEqual({ ...state.body, sequence: undefined }, { sequence: undefined, failures: 0, lastError: null });
    assert.equal(receiver.deliveries.length, 1, 'the later events of the same write match no execution');
  });

  it('delivers a group to the events of that group, and all to every event', async () => {
    const group = await targetWithReceiver('group-user');
    const all = await targetWithReceiver('all-events');
    await setExecution({ event: { group: 'user' } }, [group.id]);
    await setExecution({ event: { all: true } }, [all.id]);
    const userId = await addHuman();
    const project = await server.api('POST', '/management/v1/projects', { body: { name: 'actions-project' } });
    assert.equal(project.status, 200, project.text);
    const last = await addHuman();
    await until(
      () => deliveredUsers(group.receiver),
      (ids) => ids.includes(last),
      'the group delivery',
    );
    await until(
      () => deliveredUsers(all.receiver),
      (ids) => ids.includes(last),
      'the all delivery',
    );
    assert.deepEqual(deliveredUsers(group.receiver), [userId, last]);
    assert.ok(
      deliveredTypes(group.receiver).every((type) => type.startsWith('user.')),
      deliveredTypes(group.receiver).join(),
    );
    assert.ok(deliveredTypes(all.receiver).includes('project.added'), deliveredTypes(all.receiver).join());
    // Not even the event that set the execution of "all": only what was written after it.
    assert.equal(all.receiver.deliveries[0]!.body.aggregateID, userId);
    for (const receiver of [group.receiver, all.receiver]) {
      const sequences = receiver.deliveries.map((d) => d.body.sequence);
      assert.deepEqual(
        sequences,
        [...sequences].sort((a, b) => a - b),
        'in sequence order',
      );
    }
  });

  it('retries an event the receiver answers 500 three times, later events waiting their turn', async () => {
    const { id, receiver } = await targetWithReceiver('flaky');
    let refused = 0;
    receiver.answer = () => {
      refused += 1;
      return refused <= 3 ? 500 : 200;
    };
    await setExecution({ event: { event: 'user.human.added' } }, [id]);
    const first = await addHuman();
    const second = await addHuman();
    await until(
      () => receiver.deliveries.length,
      (n) => n >= 2,
      'both users',
    );
    assert.deepEqual(
      receiver.attempts.map((a) => a.body.aggregateID),
      [first, first, first, first, second],
    );
    assert.deepEqual(deliveredUsers(receiver), [first, second]);
    // Counted once the cursor has moved, a moment after the receiver answered.
    const metrics = await until(
      async () => (await fetch(`${server.url}/metrics`)).text(),
      (text) => new RegExp(`portcullis_action_deliveries_total\\{target="${id}",outcome="delivered"\\} 2`).test(text),
      'both deliveries counted',
    );
    assert.match(metrics, new RegExp(`portcullis_action_deliveries_total\\{target="${id}",outcome="retried"\\} 3`));
  });

  it('delivers all 20 users added while the receiver was down, in order, once it is up', async () => {
    const { id, receiver } = await targetWithReceiver('down');
    await setExecution({ event: { event: 'user.human.added' } }, [id]);
    await receiver.pause();
    const added: string[] = [];
    for (let i = 0; i < 20; i++) added.push(await addHuman());
    const down = await until(
      () => server.api('GET', `/v2beta/actions/targets/${id}/state`),
      (res) => res.body.failures >= 1,
      'a failed attempt',
    );
    assert.ok(down.body.lastError, down.text);
    await receiver.start();
    await until(
      () => receiver.deliveries.length,
      (n) => n >= 20,
      'all 20 users',
    );
    assert.deepEqual(deliveredUsers(receiver), added);
    const state = await until(
      () => server.api('GET', `/v2beta/actions/targets/${id}/state`),
      (res) => res.body.failures === 0,
      'the failures forgotten',
    );
    assert.equal(state.body.lastError, null);
  });

  it('signs every attempt afresh: the time of a retry is its own', async () => {
    const { id, receiver } = await targetWithReceiver('fresh');
    let refused = false;
    receiver.answer = () => {
      if (refused) return 200;
      refused = true;
      return 503;
    };
    await setExecution({ event: { event: 'user.human.added' } }, [id]);
    await addHuman();
    await until(
      () => receiver.deliveries.length,
      (n) => n >= 1,
      'the retried delivery',
    );
    const [failed, delivered] = receiver.attempts;
    assert.equal(failed!.raw, delivered!.raw, 'the same body');
    // The retry came at least a second later (ACTIONS_RETRY_DELAY=1), so its signature time differs.
    assert.ok(delivered!.t > failed!.t, `${delivered!.t} after ${failed!.t}`);
  });
});

describe('an event that keeps failing', () => {
  let short: TestServer;
  before(async () => {
    short = await testServer({ env: { ACTIONS_RETRY_FOR: '1', ACTIONS_RETRY_DELAY: '1', ACTIONS_RETRY_MAX_DELAY: '1' } });
  });
  after(() => short?.stop());

  it('is recorded as failed and skipped after ACTIONS_RETRY_FOR, and the next one is delivered', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const created = await short.api('POST', '/v2beta/actions/targets', { body: { name: 'refuses-one', endpoint: receiver.url, timeout: '5s', restAsync: {} } });
    assert.equal(created.status, 200, created.text);
    receiver.key = created.body.signingKey;
    const id = created.body.id;
    const set = await short.api('PUT', '/v2beta/actions/executions', {
      body: { condition: { event: { event: 'user.machine.added' } }, targets: [{ target: id }] },
    });
    assert.equal(set.status, 200, set.text);
    const add = async (userName: string) => (await short.api('POST', '/management/v1/users/machine', { body: { userName, name: userName } })).body.userId;
    const refused = await add('refused-machine');
    receiver.answer = (delivery) => (delivery.body.aggregateID === refused ? 500 : 200);
    const next = await add('next-machine');
    await until(
      () => receiver.deliveries.length,
      (n) => n >= 1,
      'the next event',
    );
    assert.deepEqual(
      receiver.deliveries.map((d) => d.body.aggregateID),
      [next],
    );
    const tries = receiver.attempts.filter((a) => a.body.aggregateID === refused);
    assert.ok(tries.length >= 2, `retried before giving up (${tries.length} attempts)`);
    const { rows } = await short.running.db.query<{ sequence: string; attempts: number; last_error: string }>(
      'SELECT sequence::text AS sequence, attempts, last_error FROM action_delivery_failures WHERE target_id = $1',
      [id],
    );
    assert.deepEqual(
      rows.map((r) => [r.sequence, Number(r.attempts), r.last_error]),
      [[String(tries[0]!.body.sequence), tries.length, 'the target answered HTTP 500']],
    );
    const metrics = await (await fetch(`${short.url}/metrics`)).text();
    assert.match(metrics, new RegExp(`portcullis_action_deliveries_total\\{target="${id}",outcome="failed"\\} 1`));
  });
});
