import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { basicHeader, readResponse, type ApiResponse } from '../support/api.ts';
import { sleep } from '../support/server.ts';
import { needsRedisServer, startOwnRedis, type OwnRedis } from '../support/own-stores.ts';
import { API_SCOPE, eventually, startTokenWorld, type TokenWorld } from '../support/tokens.ts';
import { loadConfig } from '../../config/load.ts';

// docs/operations.md, "Redis with Sentinel": Redis behind Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME). The
// master is killed under client_credentials load; the Sentinel promotes the
// replica, and the service issues tokens again with at most 10 s of 503s,
// without a restart. Master, replica and Sentinel are this test's own.

const MASTER_NAME = 'portcullis-test';

interface Sample {
  startedAt: number;
  ms: number;
  answer: ApiResponse;
}

describe('Redis Sentinel settings', () => {
  const base = { ISSUER: 'http://localhost:8080' };
  test('REDIS_SENTINELS with REDIS_SENTINEL_NAME is a way to reach Redis', () => {
    const config = loadConfig({ ...base, REDIS_SENTINELS: 'sentinel-a:26379,10.0.0.2:26379,[::1]:26380', REDIS_SENTINEL_NAME: 'mymaster' });
    assert.equal(config.redisSentinels, 'sentinel-a:26379,10.0.0.2:26379,[::1]:26380');
    assert.equal(config.redisSentinelName, 'mymaster');
  });

  test('bad topologies stop the start with one line naming the setting', () => {
    const refuses = (env: Record<string, string>, message: RegExp) => assert.throws(() => loadConfig({ ...base, ...env }), message);
    refuses({ REDIS_SENTINELS: 'sentinel-a:26379' }, /REDIS_SENTINELS needs REDIS_SENTINEL_NAME/);
    refuses({ REDIS_SENTINEL_NAME: 'mymaster' }, /REDIS_SENTINEL_NAME is set without REDIS_SENTINELS/);
    refuses({ REDIS_SENTINELS: 'sentinel-a', REDIS_SENTINEL_NAME: 'mymaster' }, /REDIS_SENTINELS must match pattern/);
    refuses({ REDIS_SENTINELS: 'a:1,,b:2', REDIS_SENTINEL_NAME: 'mymaster' }, /REDIS_SENTINELS must match pattern/);
    refuses({ REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'my master' }, /REDIS_SENTINEL_NAME must match pattern/);
    refuses({ REDIS_URL: 'redis://cache:6379', REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'm' }, /REDIS_URL and REDIS_SENTINELS are exclusive/);
    refuses({ REDIS_URL: 'redis://cache:6379', REDIS_CLUSTER_NODES: 'a:1' }, /REDIS_URL and REDIS_CLUSTER_NODES are exclusive/);
    refuses({ REDIS_CLUSTER_NODES: 'a:1 b:2' }, /REDIS_CLUSTER_NODES must match pattern/);
    refuses({ REDIS_URL: 'redis://cache:6379', REDIS_PASSWORD: 'not-echoed-secret' }, /REDIS_PASSWORD is for REDIS_SENTINELS or REDIS_CLUSTER_NODES/);
    // A password is never echoed, not even when it is the setting at fault.
    assert.throws(
      () => loadConfig({ ...base, REDIS_CLUSTER_NODES: 'a:1', REDIS_PASSWORD: 'x'.repeat(1025) }),
      (err: Error) => /REDIS_PASSWORD/.test(err.message) && !err.message.includes('xxxx'),
    );
    assert.throws(
      () => loadConfig({ ...base, REDIS_URL: 'redis://cache:6379', REDIS_PASSWORD: 'not-echoed-secret' }),
      (err: Error) => !err.message.includes('not-echoed-secret'),
    );
  });
});

describe('Redis Sentinel failover', { skip: needsRedisServer }, () => {
  let master: OwnRedis;
  let replica: OwnRedis;
  let sentinel: OwnRedis;
  let world: TokenWorld;
  let machine: { clientId: string; clientSecret: string };

  before(async () => {
    master = await startOwnRedis();
    replica = await startOwnRedis(['--replicaof', '127.0.0.1', String(master.port)]);
    sentinel = await startOwnRedis([], { sentinelOf: { name: MASTER_NAME, masterPort: master.port } });
    assert.ok(
      await eventually(async () => (await replica.cli('INFO', 'replication')).includes('master_link_status:up'), 10_000),
      'the replica follows the master',
    );
    assert.ok(
      await eventually(async () => (await sentinel.cli('SENTINEL', 'replicas', MASTER_NAME)).includes(String(replica.port)), 10_000),
      'the Sentinel knows the replica',
    );
    // REDIS_URL empty: not the test run's own Redis, only the Sentinel's.
    world = await startTokenWorld({
      REDIS_URL: '',
      REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`,
      REDIS_SENTINEL_NAME: MASTER_NAME,
      REDIS_PREFIX: 'sentinel:',
    });
    const user = await world.createMachine('sentinel-machine');
    machine = await world.machineSecret(user.userId);
  });

  after(async () => {
    await world?.stop();
    await Promise.all([sentinel, replica, master].map((r) => r?.cleanup()));
  });

  const basic = () => ({ 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(machine.clientId, machine.clientSecret) });

  const tokenRequest = async (): Promise<Sample> => {
    const startedAt = Date.now();
    const response = await fetch(`${world.issuer}/oauth/v2/token`, {
      method: 'POST',
      headers: basic(),
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: API_SCOPE }).toString(),
    });
    return { startedAt, ms: Date.now() - startedAt, answer: await readResponse(response) };
  };

  const introspect = async (token: string) =>
    readResponse(await fetch(`${world.issuer}/oauth/v2/introspect`, { method: 'POST', headers: basic(), body: new URLSearchParams({ token }).toString() }));

  test('the master killed under client_credentials load: tokens again within 10 s, on the promoted replica, with nothing but 503s meanwhile', async () => {
    const early = await tokenRequest();
    assert.equal(early.answer.status, 200, early.answer.text);
    assert.equal((await introspect(early.answer.body.access_token)).body.active, true);

    const samples: Sample[] = [];
    let running = true;
    const workers = Array.from({ length: 3 }, async () => {
      while (running) {
        samples.push(await tokenRequest());
        await sleep(20);
      }
    });
    let killedAt = 0;
    let recoveredAt = 0;
    try {
      await sleep(1000);
      killedAt = Date.now();
      await master.kill('SIGKILL');
      assert.ok(
        await eventually(async () => samples.some((s) => s.startedAt > killedAt && s.answer.status === 503), 5000, 50),
        'the load meets 503s while there is no master',
      );
      assert.ok(
        await eventually(
          async () => samples.some((s) => s.startedAt > killedAt && s.answer.status === 200 && s.startedAt > lastUnavailable(samples)),
          12_000,
          100,
        ),
        'tokens are issued again after the failover',
      );
      recoveredAt = Date.now();
      await sleep(500);
    } finally {
      running = false;
      await Promise.all(workers);
    }

    const [, promotedPort] = (await sentinel.cli('SENTINEL', 'get-master-addr-by-name', MASTER_NAME)).split('\n');
    assert.equal(Number(promotedPort), replica.port, 'the Sentinel promoted the replica');
    const after = samples.filter((s) => s.startedAt >= killedAt);
    const unavailable = after.filter((s) => s.answer.status === 503);
    const firstUnavailable = Math.min(...unavailable.map((s) => s.startedAt));
    const outage = lastUnavailable(samples) - firstUnavailable;
    assert.ok(outage <= 10_000, `503s for at most 10 s (${outage} ms)`);
    assert.ok(recoveredAt - killedAt <= 12_000);
    for (const { answer, ms } of after) {
      assert.ok(answer.status === 200 || answer.status === 503, `only tokens and 503s, got ${answer.status}: ${answer.text.slice(0, 300)}`);
      assert.ok(ms < 2000, `every request answered within 2 s (one took ${ms} ms)`);
      if (answer.status === 503) assert.equal(answer.body.error, 'temporarily_unavailable');
    }
    // The replica had the token issued before the failover.
    assert.equal((await introspect(early.answer.body.access_token)).body.active, true, 'a token from before the failover is still known');
    const fresh = after.at(-1)!.answer;
    assert.equal(fresh.status, 200);
    assert.equal((await introspect(fresh.body.access_token)).body.active, true, 'a token from the new master introspects');
    assert.equal((await readResponse(await fetch(`${world.issuer}/readyz`))).status, 200);
  });
});

function lastUnavailable(samples: Sample[]): number {
  return Math.max(0, ...samples.filter((s) => s.answer.status === 503).map((s) => s.startedAt));
}
