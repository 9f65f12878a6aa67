import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { readResponse, type ApiResponse } from '../support/api.ts';
import { killAllChildren, readAdminPat, sleep, spawnServer, tempDir, type SpawnedServer } from '../support/server.ts';

// docs/operations.md, "Failure modes": the embedded database (PGlite in DATA_DIR) survives a process
// killed with SIGKILL in the middle of writes: the next start on the same
// DATA_DIR comes up, and every write that was acknowledged is there.

const WORKERS = 4;
// PGlite (WebAssembly) starts slowly on a busy machine, and recovers its WAL after a crash.
const READY_TIMEOUT_MS = 60_000;

describe('embedded database: SIGKILL during writes', () => {
  const dataDir = tempDir('portcullis-crash-');

  after(async () => {
    await killAllChildren();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = async (server: SpawnedServer, pat: string, method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    readResponse(
      await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${pat}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );

  test('a restart on the same DATA_DIR starts and has every acknowledged write', async () => {
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', INSTANCE_DOMAIN: 'example.test' };
    const first = await spawnServer(env, { readyTimeoutMs: READY_TIMEOUT_MS });
    assert.ok(first.healthy, `first start: ${first.stderr()}`);
    const pat = readAdminPat(dataDir);

    const acknowledged = new Map<string, string>();
    let running = true;
    const workers = Array.from({ length: WORKERS }, async (_, w) => {
      for (let n = 0; running; n += 1) {
        const userName = `crash-${w}-${n}`;
        try {
          const answer = await call(first, pat, 'POST', '/management/v1/users/machine', { userName, name: userName });
          if (answer.status === 200) acknowledged.set(userName, answer.body.userId);
          else assert.fail(`${userName}: ${answer.status} ${answer.text.slice(0, 300)}`);
        } catch (err) {
          // The process died under this request: it was never acknowledged.
          if (running) throw err;
        }
      }
    });
    await sleep(1500);
    running = false;
    first.child.kill('SIGKILL');
    assert.equal(await first.exited, null, 'killed by the signal');
    await Promise.all(workers);
    assert.ok(acknowledged.size > 10, `writes were acknowledged before the kill (${acknowledged.size})`);

    const second = await spawnServer(env, { readyTimeoutMs: READY_TIMEOUT_MS });
    try {
      assert.ok(second.healthy, `restart on the same DATA_DIR: ${second.stderr()}`);
      for (const [userName, userId] of acknowledged) {
        const answer = await call(second, pat, 'GET', `/management/v1/users/${userId}`);
        assert.equal(answer.status, 200, `${userName} is there after the crash: ${answer.text.slice(0, 200)}`);
        assert.equal(answer.body.user.userName, userName);
      }
      // And the database takes writes again.
      const after = await call(second, pat, 'POST', '/management/v1/users/machine', { userName: 'after-crash', name: 'after crash' });
      assert.equal(after.status, 200, after.text);
    } finally {
      assert.equal(await second.stop('SIGTERM', 10_000), 0);
    }
  });
});
