import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startCluster, type Cluster } from '../support/cluster.ts';
import { DATABASE_URL, needsPostgres, needsRedis } from '../support/stores.ts';
import { receiverTls, startReceiver, until, type Receiver } from '../actions/receiver.ts';

// docs/actions.md: two real server processes share the event log; the one
// delivering to a target is killed in the middle of a delivery, and the
// other takes the target's lease over once it has run out: every event
// arrives, in order (the interrupted one again: at least once).

describe('event deliveries across two nodes', { skip: needsPostgres || needsRedis }, () => {
  let cluster: Cluster;
  let receiver: Receiver;
  let db: pg.Client;

  before(async () => {
    cluster = await startCluster(2, { NODE_EXTRA_CA_CERTS: receiverTls().caFile, ACTIONS_RETRY_DELAY: '1', ACTIONS_RETRY_MAX_DELAY: '1' });
    db = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path=${cluster.nodes[0]!.server.env.DATABASE_SCHEMA}` });
    await db.connect();
    receiver = await startReceiver();
  });

  after(async () => {
    await db?.end();
    await receiver?.close();
    await cluster?.stop();
  });

  it('passes a killed node’s claim to the other node and loses nothing', async () => {
    const [a, b] = cluster.nodes as [Cluster['nodes'][0], Cluster['nodes'][0]];
    const created = await cluster.api(a, 'POST', '/v2beta/actions/targets', {
      name: 'failover',
      endpoint: receiver.url,
      timeout: '10s',
      restWebhook: {},
    });
    assert.equal(created.status, 200, created.text);
    receiver.key = created.body.signingKey;
    // The first request is never answered: the node sending it is killed while it waits.
    let held = false;
    receiver.answer = () => {
      if (held) return 200;
      held = true;
      return new Promise<number>(() => {});
    };
    const set = await cluster.api(b, 'PUT', '/v2beta/actions/executions', {
      condition: { event: { event: 'user.human.added' } },
      targets: [{ target: created.body.id }],
    });
    assert.equal(set.status, 200, set.text);
    const added: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await cluster.api(i % 2 ? a : b, 'POST', '/management/v1/users/human', {
        userName: `failover-${i}`,
        profile: { firstName: 'Ada', lastName: `Nr ${i}` },
        email: { email: `failover-${i}@example.com`, isEmailVerified: true },
      });
      assert.equal(res.status, 200, res.text);
      added.push(res.body.userId);
    }
    await until(
      () => receiver.attempts.length,
      (n) => n >= 1,
      'the first attempt',
      30_000,
    );
    const { rows } = await db.query<{ lease_owner: string }>('SELECT lease_owner FROM action_deliveries WHERE target_id = $1', [created.body.id]);
    const pid = Number(rows[0]!.lease_owner.split('/')[1]);
    const deliverer = cluster.nodes.find((node) => node.server.child.pid === pid);
    assert.ok(deliverer, `a node holds the lease (${rows[0]!.lease_owner})`);
    const survivor = deliverer === a ? b : a;
    assert.equal(await deliverer.server.stop('SIGKILL'), null);

    await until(
      () => receiver.deliveries.length,
      (n) => n >= 5,
      'all five users from the other node',
      90_000,
    );
    assert.deepEqual(
      receiver.deliveries.map((d) => d.body.aggregateID),
      added,
    );
    assert.equal(receiver.attempts[0]!.body.aggregateID, added[0], 'the interrupted delivery was of the first user');
    assert.deepEqual(receiver.badSignatures, []);
    const state = await cluster.api(survivor, 'GET', `/v2beta/actions/targets/${created.body.id}/state`);
    assert.equal(state.body.failures, 0);
    const after = await db.query<{ lease_owner: string | null }>('SELECT lease_owner FROM action_deliveries WHERE target_id = $1', [created.body.id]);
    assert.ok(!after.rows[0]!.lease_owner?.includes(`/${pid}/`), 'the killed node holds nothing');
  });
});
