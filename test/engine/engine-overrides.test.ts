import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Provider from 'oidc-provider';
import { PATCHED_MEMBERS, overrideEngine, patchedMember } from '../../src/engine/engine-overrides.ts';
import { jwtAccessTokens } from '../../src/engine/jwt-access-tokens.ts';
import { generateKeyPair, exportJWK } from 'jose';

// The engine members src/engine/engine-overrides.ts replaces. An engine
// upgrade that renames or drops one fails here, by name, instead of leaving
// the service silently unpatched.

async function signingJwk() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: 'test', alg: 'RS256', use: 'sig' };
}

const bareEngine = async () =>
  new Provider('http://127.0.0.1:1', {
    jwks: { keys: [(await signingJwk()) as never] },
    features: { devInteractions: { enabled: false }, clientCredentials: { enabled: true } },
  });

describe('engine overrides', () => {
  test('every member the overrides replace exists on a bare engine', async () => {
    const engine = await bareEngine();
    const missing = PATCHED_MEMBERS.filter((path) => patchedMember(engine, path) === undefined);
    assert.deepEqual(missing, []);
  });

  test('applying them replaces each of those members', async () => {
    const engine = await bareEngine();
    const before = new Map(PATCHED_MEMBERS.map((path) => [path, patchedMember(engine, path)]));
    overrideEngine(engine, {
      secretKey: Buffer.alloc(32),
      jwt: jwtAccessTokens('http://127.0.0.1:1', [await signingJwk()]),
      machineKeys: async () => undefined,
      logouts: { send() {} },
    });
    const unchanged = PATCHED_MEMBERS.filter((path) => patchedMember(engine, path) === before.get(path));
    assert.deepEqual(unchanged, []);
  });

  test('an engine without one of them refuses to start, naming the member', async () => {
    const engine = await bareEngine();
    (engine.Client.prototype as unknown as Record<string, unknown>).compareClientSecret = undefined;
    const jwt = jwtAccessTokens('http://127.0.0.1:1', [await signingJwk()]);
    assert.throws(
      () => overrideEngine(engine, { secretKey: Buffer.alloc(32), jwt, machineKeys: async () => undefined, logouts: { send() {} } }),
      /Client\.prototype\.compareClientSecret/,
    );
  });
});
