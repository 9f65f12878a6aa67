import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { AuthThrottle, clientAddress, memoryFailureWindow, type FailureWindow } from '../../src/security/auth-throttle.ts';
import { redisFailureWindow } from '../../src/storage/auth-failures.ts';
import { needsRedis, openRedisForTest, type TestRedis } from '../support/stores.ts';

// The sliding window of failed authentications per client address, in
// memory and in Redis, and the block that answers without a store.

describe('in memory', () => {
  test('more than `limit` failures within the window: the answer is the time until the window has room again', async () => {
    let now = 1_000_000;
    const window = memoryFailureWindow(3, 10, () => now);
    for (let i = 0; i < 3; i++) {
      assert.equal(await window.add('a'), 0, `failure ${i + 1} of 3`);
      now += 1000;
    }
    // Failures at 0 s, 1 s, 2 s and now 3 s: room again when the first leaves, at 10 s.
    assert.equal(await window.add('a'), 7000);
    assert.equal(await window.add('b'), 0, 'another address has its own window');
    now += 7000;
    assert.equal(await window.add('a'), 1000, 'at 10 s the first failure has left, three remain with this one');
    now += 3000;
    assert.equal(await window.add('a'), 0, 'at 13 s only the failure of 10 s and this one remain');
  });

  test('a limit of 1 with a one-second window', async () => {
    let now = 0;
    const window = memoryFailureWindow(1, 1, () => now);
    assert.equal(await window.add('a'), 0);
    now = 400;
    assert.equal(await window.add('a'), 600);
    now = 1401;
    assert.equal(await window.add('a'), 0, 'the failure of 400 ms has left the window');
  });
});

describe('in Redis', { skip: needsRedis }, () => {
  let store: TestRedis;
  before(async () => {
    store = await openRedisForTest();
  });
  after(async () => {
    await store?.cleanup();
  });

  test('the same window, kept per address in one sorted set with a TTL, trimmed to limit + 1 entries', async () => {
    const window = redisFailureWindow(store.redis, 3, 2);
    for (let i = 0; i < 3; i++) assert.equal(await window.add('198.51.100.1'), 0);
    const wait = await window.add('198.51.100.1');
    assert.ok(wait > 1500 && wait <= 2000, `about two seconds: ${wait}`);
    for (let i = 0; i < 20; i++) assert.ok((await window.add('198.51.100.1')) > 0);
    const key = 'auth-failures:{198.51.100.1}';
    assert.equal(await store.redis.zcard(key), 4, 'never more than limit + 1 entries');
    const ttl = await store.redis.pttl(key);
    assert.ok(ttl > 0 && ttl <= 2000, `expires with the window: ${ttl}`);
    assert.equal(await window.add('2001:db8::1'), 0, 'another address (IPv6) has its own window');
    await new Promise((resolve) => setTimeout(resolve, 2100));
    assert.equal(await window.add('198.51.100.1'), 0, 'the window has room again');
  });
});

describe('the block', () => {
  function countingWindow(answer: number): FailureWindow & { calls: number } {
    const spy = {
      calls: 0,
      async add() {
        spy.calls++;
        return answer;
      },
    };
    return spy;
  }

  test('checking an address never touches the store; a failure over the limit blocks it in memory', async () => {
    let now = 0;
    const store = countingWindow(0);
    const throttle = new AuthThrottle(store, { now: () => now });
    for (let i = 0; i < 1000; i++) assert.equal(throttle.retryAfter('a'), undefined);
    assert.equal(store.calls, 0, 'checks are memory only');
    await throttle.failed('a');
    assert.equal(store.calls, 1);
    assert.equal(throttle.retryAfter('a'), undefined, 'within the limit');

    const over = new AuthThrottle(countingWindow(2500), { now: () => now });
    await over.failed('a');
    assert.equal(over.retryAfter('a'), 3, 'whole seconds, rounded up');
    assert.equal(over.retryAfter('b'), undefined);
    now = 2400;
    assert.equal(over.retryAfter('a'), 1, 'at least one second');
    now = 2500;
    assert.equal(over.retryAfter('a'), undefined, 'free when the window has room');
  });

  test('while no address is blocked, a request is let through without working out its address', async () => {
    const throttle = new AuthThrottle(countingWindow(1000));
    const untouchable = {
      get socket(): never {
        throw new Error('the address was worked out');
      },
      headers: {},
    } as unknown as IncomingMessage;
    assert.equal(throttle.retryAfterOf(untouchable), undefined);
    await throttle.failed('192.0.2.1');
    const blocked = { socket: { remoteAddress: '192.0.2.1' }, headers: {} } as unknown as IncomingMessage;
    const other = { socket: { remoteAddress: '192.0.2.2' }, headers: {} } as unknown as IncomingMessage;
    assert.equal(throttle.retryAfterOf(blocked), 1);
    assert.equal(throttle.retryAfterOf(other), undefined);
  });

  test('no store (limit 0): nothing is counted or blocked', async () => {
    const throttle = new AuthThrottle(undefined);
    await throttle.failed('a');
    throttle.block('a', 10_000);
    assert.equal(throttle.retryAfter('a'), undefined);
  });

  test('a store that fails is reported; the request is not failed by it and the address is not blocked', async () => {
    const reported: unknown[] = [];
    const throttle = new AuthThrottle({ add: () => Promise.reject(new Error('store down')) }, { onStoreError: (err) => reported.push(err) });
    await throttle.failed('a');
    assert.equal(reported.length, 1);
    assert.equal(throttle.retryAfter('a'), undefined);
  });
});

describe('the client address', () => {
  const req = (remoteAddress: string | undefined, forwarded?: string | string[]) =>
    ({ socket: { remoteAddress }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

  test('the socket address, IPv4 in IPv6 form as IPv4; X-Forwarded-For only with TRUST_PROXY', () => {
    assert.equal(clientAddress(req('::ffff:192.0.2.7', '203.0.113.9'), false), '192.0.2.7');
    assert.equal(clientAddress(req('2001:db8::5'), false), '2001:db8::5');
    assert.equal(clientAddress(req('10.0.0.1', '203.0.113.9, 10.0.0.2'), true), '203.0.113.9');
    assert.equal(clientAddress(req('10.0.0.1', ['203.0.113.9', '198.51.100.1']), true), '203.0.113.9');
    assert.equal(clientAddress(req('10.0.0.1', 'not-an-address'), true), '10.0.0.1', 'a forged value that is no address falls back to the socket');
    assert.equal(clientAddress(req('10.0.0.1', ''), true), '10.0.0.1');
    assert.equal(clientAddress(req(undefined), false), 'unknown');
  });
});
