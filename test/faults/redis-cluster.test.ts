import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import type { AdapterPayload } from 'oidc-provider';
import { basicHeader, readResponse } from '../support/api.ts';
import {
  codeLogin,
  confidentialAppFor,
  launchBrowser,
  needsChromium,
  startRelyingParty,
  startSignInWorld,
  type RelyingParty,
  type SignInWorld,
  type TestUser,
} from '../support/browser.ts';
import { needsRedisServer, startOwnRedisCluster, type OwnRedisCluster } from '../support/own-stores.ts';
import { eventually } from '../support/tokens.ts';
import { RedisAdapter } from '../../adapters/redis.ts';
import { closeRedis, connectRedis, type RedisClient } from '../../src/storage/redis.ts';

// docs/operations.md, "Redis Cluster" (REDIS_CLUSTER_NODES). A Redis Cluster
// refuses a command or MULTI whose keys are in different hash slots (CROSSSLOT); our
// records' keys are spread over the slots of three masters, and every
// operation still works: the engine's storage itself, then a code flow in a
// browser, client_credentials, introspection and revocation, and the cache
// invalidation channel. The three masters are this test's own.

const TTL = 60;

function record(model: string, id: string, fields: AdapterPayload = {}): AdapterPayload {
  const now = Math.floor(Date.now() / 1000);
  return { jti: id, kind: model, iat: now, exp: now + TTL, ...fields };
}

/** Keys per node, so a test can tell that the data really is spread. */
async function keysPerNode(cluster: OwnRedisCluster): Promise<number[]> {
  return Promise.all(cluster.nodes.map(async (node) => Number(await node.cli('DBSIZE'))));
}

describe('Redis Cluster', { skip: needsRedisServer }, () => {
  let cluster: OwnRedisCluster;

  before(async () => {
    cluster = await startOwnRedisCluster(3);
  });
  after(async () => {
    await cluster?.cleanup();
  });

  describe('the engine storage on three masters', () => {
    let redis: RedisClient;
    const adapter = (model: string) => new RedisAdapter(model, redis);

    before(async () => {
      redis = await connectRedis({ redisClusterNodes: cluster.addresses, redisPrefix: 'adapter:' });
    });
    after(async () => {
      if (redis) await closeRedis(redis);
    });

    test('saves a record with grant, uid and user code indexes in other slots, and finds it by each', async () => {
      const id = randomUUID();
      const grantId = randomUUID();
      const uid = randomUUID();
      const userCode = randomUUID();
      const saved = record('DeviceCode', id, { grantId, uid, userCode });
      await adapter('DeviceCode').upsert(id, saved, TTL);
      assert.deepEqual(await adapter('DeviceCode').find(id), saved);
      assert.deepEqual(await adapter('DeviceCode').findByUid(uid), saved);
      assert.deepEqual(await adapter('DeviceCode').findByUserCode(userCode), saved);
      await adapter('DeviceCode').consume(id);
      assert.ok((await adapter('DeviceCode').find(id))?.consumed);
      // Saved again: not consumed any more, as on a single Redis.
      await adapter('DeviceCode').upsert(id, saved, TTL);
      assert.equal((await adapter('DeviceCode').find(id))?.consumed, undefined);

      await adapter('DeviceCode').destroy(id);
      assert.equal(await adapter('DeviceCode').find(id), undefined);
      assert.equal(await adapter('DeviceCode').findByUid(uid), undefined);
      assert.equal(await adapter('DeviceCode').findByUserCode(userCode), undefined);
    });

    test('revokes every record of a grant, wherever their keys are, and only those', async () => {
      const grantId = randomUUID();
      const ids = Array.from({ length: 60 }, () => randomUUID());
      const other = randomUUID();
      await Promise.all(ids.map((id) => adapter('AccessToken').upsert(id, record('AccessToken', id, { grantId }), TTL)));
      await adapter('AccessToken').upsert(other, record('AccessToken', other, { grantId: randomUUID() }), TTL);
      const perNode = await keysPerNode(cluster);
      assert.ok(
        perNode.every((n) => n > 0),
        `the records are spread over all three masters (${perNode})`,
      );

      await adapter('AccessToken').revokeByGrantId(grantId);
      for (const id of ids) assert.equal(await adapter('AccessToken').find(id), undefined);
      assert.ok(await adapter('AccessToken').find(other), 'a record of another grant stays');
      // Revoking again (an empty grant) is fine.
      await adapter('AccessToken').revokeByGrantId(grantId);
    });

    test('an unknown id, uid or user code is simply not found', async () => {
      assert.equal(await adapter('Session').find('no-such-id'), undefined);
      assert.equal(await adapter('Session').findByUid('no-such-uid'), undefined);
      assert.equal(await adapter('DeviceCode').findByUserCode('{no-such-code}'), undefined);
      await adapter('Session').destroy('no-such-id');
    });
  });

  describe('the service on it, in Chromium', { skip: needsChromium }, () => {
    let world: SignInWorld;
    let rp: RelyingParty;
    let browser: Browser;
    let user: TestUser;
    let web: { clientId: string; clientSecret?: string };
    let config: client.Configuration;

    before(async () => {
      // REDIS_URL empty: not the test run's own Redis, only the cluster.
      [world, rp, browser] = await Promise.all([
        startSignInWorld({ REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.addresses.split(',')[0]!, REDIS_PREFIX: 'service:' }),
        startRelyingParty(),
        launchBrowser(),
      ]);
      web = await world.createApp({ name: 'Web', ...confidentialAppFor(rp) });
      user = await world.createUser('cluster-user');
      config = await client.discovery(new URL(world.issuer), web.clientId, undefined, client.ClientSecretBasic(web.clientSecret!), {
        execute: [client.allowInsecureRequests],
      });
    });
    after(async () => {
      await browser?.close();
      await rp?.close();
      await world?.stop();
    });

    const asWeb = (path: string, form: Record<string, string>) =>
      fetch(`${world.issuer}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(web.clientId, web.clientSecret!) },
        body: new URLSearchParams(form).toString(),
      }).then(readResponse);
    const active = async (token: string) => (await asWeb('/oauth/v2/introspect', { token })).body.active as boolean;

    /** A login in a browser of its own (no session yet), the code redeemed by openid-client. */
    const login = async (scope: string) => {
      const context = await browser.newContext();
      try {
        return (await codeLogin(await context.newPage(), config, rp, user, scope)).tokens;
      } finally {
        await context.close();
      }
    };

    test('code flow, introspection and revocation of the access token, and of the whole grant with its refresh token', async () => {
      const first = await login('openid profile');
      assert.ok(first.id_token, 'an ID token');
      assert.equal(await active(first.access_token), true);
      const revoked = await asWeb('/oauth/v2/revoke', { token: first.access_token });
      assert.equal(revoked.status, 200, revoked.text);
      assert.equal(await active(first.access_token), false, 'a revoked access token is inactive');

      const second = await login('openid offline_access');
      assert.ok(second.refresh_token, 'a refresh token');
      const refreshed = await client.refreshTokenGrant(config, second.refresh_token!);
      assert.equal(await active(refreshed.access_token), true);
      await asWeb('/oauth/v2/revoke', { token: refreshed.refresh_token ?? second.refresh_token! });
      assert.equal(await active(refreshed.access_token), false, 'revoking the refresh token revokes its grant: the access token of it too');
    });

    test('client_credentials, introspection and revocation of a machine token', async () => {
      const machine = await world.api('POST', '/management/v1/users/machine', { userName: 'cluster-machine', name: 'cluster machine' });
      assert.equal(machine.status, 200);
      const secret = await world.api('PUT', `/management/v1/users/${machine.body.userId}/secret`, {});
      const { clientId, clientSecret } = secret.body as { clientId: string; clientSecret: string };
      const token = await fetch(`${world.issuer}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(clientId, clientSecret) },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'openid' }).toString(),
      }).then(readResponse);
      assert.equal(token.status, 200, token.text);
      const accessToken = token.body.access_token as string;
      const asMachine = (path: string, form: Record<string, string>) =>
        fetch(`${world.issuer}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(clientId, clientSecret) },
          body: new URLSearchParams(form).toString(),
        }).then(readResponse);
      const introspected = await asMachine('/oauth/v2/introspect', { token: accessToken });
      assert.equal(introspected.body.active, true, introspected.text);
      const revoked = await asMachine('/oauth/v2/revoke', { token: accessToken });
      assert.equal(revoked.status, 200, revoked.text);
      assert.equal((await asMachine('/oauth/v2/introspect', { token: accessToken })).body.active, false);
      // Bad input stays a client error on a cluster too.
      const bad = await asWeb('/oauth/v2/introspect', { token: '{a-hash-tag}' });
      assert.equal(bad.status, 200);
      assert.equal(bad.body.active, false);
    });

    test('the records are spread over several masters, and the cache invalidation channel is subscribed', async () => {
      // The keys of the flows above (a few dozen) land on at least two masters, all but surely on three.
      const perNode = await keysPerNode(cluster);
      assert.ok(perNode.filter((n) => n > 0).length >= 2, `keys on several masters (${perNode})`);
      // PUBSUB NUMSUB counts one node's subscribers; the client subscribes on one node of its choice.
      const subscribers = async () =>
        (await Promise.all(cluster.nodes.map(async (node) => Number((await node.cli('PUBSUB', 'NUMSUB', 'service:invalidate')).split('\n')[1])))).reduce(
          (a, b) => a + b,
          0,
        );
      assert.ok(await eventually(async () => (await subscribers()) >= 1, 3000), 'the invalidation channel has a subscriber');
    });
  });
});
