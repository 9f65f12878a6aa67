import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { basicHeader, readResponse, type ApiResponse } from '../support/api.ts';
import { freePort, sleep, spawnServer, type SpawnedServer } from '../support/server.ts';
import { needsPostgres, needsRedis } from '../support/stores.ts';
import { startCluster, type Cluster } from '../support/cluster.ts';
import { startLoadBalancer, type LoadBalancer } from '../support/load-balancer.ts';

// docs/operations.md, "Several nodes": three nodes behind a load balancer
// (round robin, health checks on /readyz, keep-alive to the nodes), one
// ISSUER, the load balancer's. A rolling restart under client_credentials
// load — each node in turn gets SIGTERM and is started again — costs no
// request: every one is answered 200, and every token works on every node.

const API_SCOPE = 'urn:service:iam:api';

describe('three nodes behind a load balancer', { skip: needsPostgres || needsRedis }, () => {
  let cluster: Cluster;
  let lb: LoadBalancer;
  const restarted: SpawnedServer[] = [];
  let machine: { clientId: string; clientSecret: string };

  before(async () => {
    const lbPort = await freePort();
    cluster = await startCluster(3, { ISSUER: `http://127.0.0.1:${lbPort}`, TRUST_PROXY: 'true', SHUTDOWN_TIMEOUT: '5' });
    lb = await startLoadBalancer(
      lbPort,
      cluster.nodes.map((n) => n.port),
    );
    const [A] = cluster.nodes;
    const user = await cluster.api(A!, 'POST', '/management/v1/users/machine', { userName: 'lb-machine', name: 'lb machine' });
    assert.equal(user.status, 200, user.text);
    const secret = await cluster.api(A!, 'PUT', `/management/v1/users/${user.body.userId}/secret`, {});
    machine = { clientId: secret.body.clientId, clientSecret: secret.body.clientSecret };
  });

  after(async () => {
    await lb?.close();
    await Promise.all(restarted.map((s) => s.stop('SIGTERM', 5000)));
    await cluster?.stop();
  });

  const post = async (path: string, form: Record<string, string>): Promise<ApiResponse> =>
    readResponse(
      await fetch(`${lb.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(machine.clientId, machine.clientSecret) },
        body: new URLSearchParams(form).toString(),
      }),
    );

  test('discovery through the load balancer names it as the issuer, whichever node answers', async () => {
    for (let i = 0; i < 3; i += 1) {
      const discovery = await readResponse(await fetch(`${lb.url}/.well-known/openid-configuration`));
      assert.equal(discovery.body.issuer, lb.url);
      assert.equal(discovery.body.token_endpoint, `${lb.url}/oauth/v2/token`);
    }
    assert.equal(new Set(lb.served.slice(-3)).size, 3, 'round robin over the three nodes');
  });

  test('a rolling restart under client_credentials load: every request answered 200, every token active on every node', async () => {
    const answers: ApiResponse[] = [];
    let running = true;
    const workers = Array.from({ length: 3 }, async () => {
      while (running) answers.push(await post('/oauth/v2/token', { grant_type: 'client_credentials', scope: API_SCOPE }));
    });
    try {
      for (const node of cluster.nodes) {
        await sleep(300);
        const before = answers.length;
        assert.equal(await node.server.stop('SIGTERM', 10_000), 0, `node ${node.name} stops cleanly`);
        // Its own DATA_DIR went with it; MASTER_KEY and the stores are shared.
        const { DATA_DIR: _gone, ...env } = node.server.env;
        const again = await spawnServer(env, { readyTimeoutMs: 60_000 });
        restarted.push(again);
        assert.ok(again.healthy, `node ${node.name} starts again: ${again.stderr()}`);
        // Back in the pool after a health check, and serving.
        const deadline = Date.now() + 5000;
        while (!lb.served.slice(-20).includes(node.port) && Date.now() < deadline) await sleep(100);
        assert.ok(lb.served.slice(-20).includes(node.port), `node ${node.name} serves again`);
        assert.ok(answers.length > before, 'the load went on');
      }
    } finally {
      running = false;
      await Promise.all(workers);
    }
    assert.ok(answers.length > 30, `load ran (${answers.length} requests)`);
    for (const answer of answers) assert.equal(answer.status, 200, `every request answered: ${answer.status} ${answer.text.slice(0, 200)}`);

    // A token from before and one from after the restarts, introspected three times: once on each node.
    for (const answer of [answers[0]!, answers.at(-1)!]) {
      const servedBefore = lb.served.length;
      for (let i = 0; i < 3; i += 1) {
        const introspection = await post('/oauth/v2/introspect', { token: answer.body.access_token });
        assert.equal(introspection.body.active, true, introspection.text);
      }
      assert.equal(new Set(lb.served.slice(servedBefore)).size, 3, 'introspected on each node');
    }
  });
});
