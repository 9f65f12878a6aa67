import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { SignJWT, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import {
  TOKEN_EXCHANGE,
  TYPE,
  expectError,
  expectTokens,
  startExchangeWorld,
  type App,
  type ExchangeWorld,
  type Machine,
  type MachineTokens,
} from '../support/exchange.ts';
import { storedGrantOf } from '../support/tokens.ts';
import { REDIS_URL } from '../support/stores.ts';

// docs/oidc.md and docs/security.md: token exchange (RFC 8693) behind the
// oidcTokenExchange feature flag — every row of the token type table, the
// response fields, impersonation with its roles, the audience subset rule,
// scope narrowing and the errors of bad requests. The scene is built
// through the admin API; requests go through openid-client, and no answer
// may ever be a 5xx.

let world: ExchangeWorld;
/** BASIC app of project A that may exchange tokens. */
let app: App;
/** PRIVATE_KEY_JWT app of project A with a registered key: signs `jwt` subject tokens. */
let keyApp: App;
/** BASIC app of project A set to JWT access tokens. */
let jwtApp: App;
/** BASIC app of project B. */
let otherApp: App;
/** BASIC app of project A without the token exchange grant type. */
let noExchangeApp: App;
/** Humans: alice in the default org, bob in another org. */
let alice: string;
let bob: string;
/** Machine users with JSON keys: no role; JWT access tokens, no role; IAM_END_USER_IMPERSONATOR; ORG_END_USER_IMPERSONATOR of the default org. */
let plain: Machine;
let jwtUser: Machine;
let iamImpersonator: Machine;
let orgImpersonator: Machine;
let jwks: ReturnType<typeof createRemoteJWKSet>;
/** A key of nobody we know, to forge tokens with. */
let strangerKey: KeyObject;

const isJwt = (value: string) => value.split('.').length === 3;

before(async () => {
  world = await startExchangeWorld();
  const [projectA, projectB] = await Promise.all([world.createProject('Exchange A'), world.createProject('Exchange B')]);
  const setup = await world.admin('POST', '/admin/v1/orgs/_setup', {
    org: { name: 'Other Org', domain: 'other.example.test' },
    human: { userName: 'bob', profile: { firstName: 'Bob', lastName: 'Other' }, email: { email: 'bob@other.example.test', isEmailVerified: true } },
  });
  bob = setup.userId;
  [app, keyApp, jwtApp, otherApp, noExchangeApp, alice, plain, jwtUser, iamImpersonator, orgImpersonator] = await Promise.all([
    world.createApp(projectA, 'Exchanger'),
    world.createApp(projectA, 'Key exchanger', { authMethodType: 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' }),
    world.createApp(projectA, 'JWT exchanger', { accessTokenType: 'OIDC_TOKEN_TYPE_JWT' }),
    world.createApp(projectB, 'Other exchanger'),
    world.createApp(projectA, 'No exchange', { grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'] }),
    world.createHuman('alice'),
    world.createMachine('plain'),
    world.createMachine('jwt-user', 'ACCESS_TOKEN_TYPE_JWT'),
    world.createMachine('iam-impersonator'),
    world.createMachine('org-impersonator'),
  ]);
  await Promise.all([
    world.admin('POST', '/admin/v1/members', { userId: iamImpersonator.userId, roles: ['IAM_END_USER_IMPERSONATOR'] }),
    world.admin('POST', '/management/v1/orgs/me/members', { userId: orgImpersonator.userId, roles: ['ORG_END_USER_IMPERSONATOR'] }, world.defaultOrgId),
  ]);
  jwks = createRemoteJWKSet(new URL(world.metadata.jwks_uri!));
  strangerKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
});

after(async () => {
  await world?.stop();
});

// ---- helpers

const tokensOf = (machine: Machine, scope?: string): Promise<MachineTokens> => world.machineTokens(machine, scope);

/**
 * A subject access token an app may exchange: one issued to that app (a
 * token of another app is refused, docs/security.md), for a machine user or
 * a user id.
 */
const subjectAt = (by: App, who: Machine | string, scope = 'openid profile offline_access'): Promise<string> =>
  world.tokenIssuedTo(by, typeof who === 'string' ? who : who.userId, scope);

/** Exchange by `by` with the given parameters (arrays are sent repeated). */
const exchange = (by: App, params: Record<string, string | string[]>) => world.exchange(by, params);

/** A token issued to `by` for `machine` by exchanging its own access token. */
async function tokenAt(by: App, machine: Machine, extra: Record<string, string> = {}): Promise<Record<string, any>> {
  return expectTokens(await exchange(by, { subject_token: await subjectAt(by, machine), subject_token_type: TYPE.accessToken, ...extra }));
}

/** An access token for `subject` issued to `by`, obtained by the IAM impersonator. */
async function impersonated(by: App, subject: string, extra: Record<string, string> = {}): Promise<Record<string, any>> {
  const actor = await tokensOf(iamImpersonator);
  return expectTokens(
    await exchange(by, {
      subject_token: subject,
      subject_token_type: TYPE.userId,
      actor_token: actor.access_token,
      actor_token_type: TYPE.accessToken,
      ...extra,
    }),
  );
}

/**
 * The IAM impersonator acting for `subject` at `by` through the subject's own
 * token holding `scope`: a bare user id passes on neither offline_access nor
 * the API scope, a token holding them does.
 */
async function impersonatedHolding(by: App, subject: string, scope: string): Promise<Record<string, any>> {
  const actor = await tokensOf(iamImpersonator);
  const subjectToken = await subjectAt(by, subject, scope);
  return expectTokens(
    await exchange(by, {
      subject_token: subjectToken,
      subject_token_type: TYPE.accessToken,
      actor_token: actor.access_token,
      actor_token_type: TYPE.accessToken,
    }),
  );
}

/** A `jwt` subject token: signed with `key` (kid given), `iss` and `sub` as given. */
function signedJwt(key: KeyObject, kid: string, claims: { iss: string; sub: string }): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', kid })
    .setIssuer(claims.iss)
    .setSubject(claims.sub)
    .setAudience(world.issuer)
    .setIssuedAt()
    .setExpirationTime('5m')
    .setJti(randomUUID())
    .sign(key);
}

function appKey(of: App): { keyId: string; privateKey: KeyObject } {
  assert.ok(of.signingKey, 'a PRIVATE_KEY_JWT app with a key');
  return of.signingKey;
}

/** Introspection by `by`: active, for `sub`, with the given `act` (undefined: none). */
async function assertActiveFor(by: App, token: string, sub: string, act?: string): Promise<client.IntrospectionResponse> {
  const info = await world.introspect(by, token);
  assert.equal(info.active, true, `introspection by ${by.clientId}: ${JSON.stringify(info)}`);
  assert.equal(info.sub, sub);
  assert.deepEqual(info.act, act === undefined ? undefined : { sub: act });
  return info;
}

async function grantTypesSupported(): Promise<string[]> {
  const config = await client.discovery(new URL(world.issuer), app.clientId, undefined, app.auth, { execute: [client.allowInsecureRequests] });
  const supported = config.serverMetadata().grant_types_supported;
  assert.ok(
    supported?.includes('authorization_code') && supported.includes('urn:ietf:params:oauth:grant-type:jwt-bearer'),
    `grant_types_supported: ${supported}`,
  );
  return supported ?? [];
}

// ---- the feature flag

describe('token exchange is a beta feature behind the oidcTokenExchange flag (docs/api/features.md)', () => {
  let request: Record<string, string>;
  before(async () => {
    request = { subject_token: await subjectAt(app, plain), subject_token_type: TYPE.accessToken };
  });
  after(async () => {
    await world.setTokenExchange(true);
  });

  test('off (the default): unsupported_grant_type, and discovery does not list the grant', async () => {
    expectError(await exchange(app, request), 400, 'unsupported_grant_type');
    assert.ok(!(await grantTypesSupported()).includes(TOKEN_EXCHANGE));
  });

  test('on: the grant works and discovery lists it', async () => {
    await world.setTokenExchange(true);
    const body = expectTokens(await exchange(app, request));
    await assertActiveFor(app, body.access_token, plain.userId);
    assert.ok((await grantTypesSupported()).includes(TOKEN_EXCHANGE));
  });

  test('off again: refused again, and no longer listed', async () => {
    await world.setTokenExchange(false);
    expectError(await exchange(app, request), 400, 'unsupported_grant_type');
    assert.ok(!(await grantTypesSupported()).includes(TOKEN_EXCHANGE));
  });
});

// ---- the token type table of docs/oidc.md

describe('token types (the table of docs/oidc.md)', () => {
  before(() => world.setTokenExchange(true));

  describe('access_token', () => {
    test('an opaque access token is accepted as subject_token; the new token is for the same user', async () => {
      const own = await subjectAt(app, plain);
      assert.ok(!isJwt(own), 'app issues opaque access tokens');
      const body = expectTokens(await exchange(app, { subject_token: own, subject_token_type: TYPE.accessToken }));
      await assertActiveFor(app, body.access_token, plain.userId);
    });

    test('a JWT access token (of an app set to JWT) is accepted as subject_token', async () => {
      const own = await subjectAt(jwtApp, jwtUser);
      assert.ok(isJwt(own), 'jwtApp issues JWT access tokens');
      const body = expectTokens(await exchange(jwtApp, { subject_token: own, subject_token_type: TYPE.accessToken }));
      await assertActiveFor(jwtApp, body.access_token, jwtUser.userId);
    });

    test('opaque and JWT access tokens are accepted as actor_token', async () => {
      for (const machine of [plain, jwtUser]) {
        const own = await tokensOf(machine);
        const body = expectTokens(
          await exchange(app, {
            subject_token: machine.userId,
            subject_token_type: TYPE.userId,
            actor_token: own.access_token,
            actor_token_type: TYPE.accessToken,
          }),
        );
        await assertActiveFor(app, body.access_token, machine.userId);
      }
    });

    test('the requested access_token is opaque, even for an app and a user set to JWT access tokens', async () => {
      const own = await subjectAt(jwtApp, jwtUser);
      assert.ok(isJwt(own));
      const requests: Array<Record<string, string>> = [{}, { requested_token_type: TYPE.accessToken }];
      for (const requested of requests) {
        const body = expectTokens(await exchange(jwtApp, { subject_token: own, subject_token_type: TYPE.accessToken, ...requested }));
        assert.ok(!isJwt(body.access_token), `opaque, got ${body.access_token}`);
        assert.equal(body.issued_token_type, TYPE.accessToken);
        assert.equal(body.token_type, 'Bearer');
        await assertActiveFor(jwtApp, body.access_token, jwtUser.userId);
      }
    });
  });

  describe('refresh_token: not allowed in any role', () => {
    let refreshToken: string;
    let subject: string;
    before(async () => {
      const body = await tokenAt(app, plain, { scope: 'openid offline_access' });
      assert.ok(body.refresh_token);
      refreshToken = body.refresh_token;
      subject = await subjectAt(app, plain);
    });

    test('as subject_token: invalid_request', async () => {
      expectError(await exchange(app, { subject_token: refreshToken, subject_token_type: TYPE.refreshToken }), 400, 'invalid_request');
    });

    test('as actor_token: invalid_request', async () => {
      const outcome = await exchange(app, {
        subject_token: subject,
        subject_token_type: TYPE.accessToken,
        actor_token: refreshToken,
        actor_token_type: TYPE.refreshToken,
      });
      expectError(outcome, 400, 'invalid_request');
    });

    test('as requested_token_type: invalid_request', async () => {
      const outcome = await exchange(app, {
        subject_token: subject,
        subject_token_type: TYPE.accessToken,
        requested_token_type: TYPE.refreshToken,
        scope: 'openid offline_access',
      });
      expectError(outcome, 400, 'invalid_request');
    });
  });

  describe('id_token', () => {
    test('an ID token is accepted as subject_token by the app in its aud; by any other app (even of its project) it is invalid_grant', async () => {
      const user = await world.createSignInUser(`idt-${randomUUID().slice(0, 6)}`);
      const signedIn = await world.codeFlow(app, user, 'openid profile');
      const body = expectTokens(await exchange(app, { subject_token: signedIn.id_token!, subject_token_type: TYPE.idToken }));
      await assertActiveFor(app, body.access_token, user.userId);
      for (const other of [jwtApp, otherApp]) {
        expectError(
          await exchange(other, { subject_token: signedIn.id_token!, subject_token_type: TYPE.idToken }),
          400,
          'invalid_grant',
          /not issued to this client/,
        );
      }
      // A machine user's ID token from the JWT profile is for its own pseudo client, no app's.
      expectError(await exchange(app, { subject_token: (await tokensOf(plain)).id_token, subject_token_type: TYPE.idToken }), 400, 'invalid_grant');
    });

    test('an ID token is never accepted as actor_token, not even for its own user: invalid_request, whatever the role', async () => {
      const own = await tokensOf(plain);
      const self = await exchange(app, {
        subject_token: plain.userId,
        subject_token_type: TYPE.userId,
        actor_token: own.id_token,
        actor_token_type: TYPE.idToken,
      });
      expectError(self, 400, 'invalid_request', /access token/);
      const actor = await tokensOf(iamImpersonator);
      const other = await exchange(app, { subject_token: alice, subject_token_type: TYPE.userId, actor_token: actor.id_token, actor_token_type: TYPE.idToken });
      expectError(other, 400, 'invalid_request', /access token/);
    });

    test('requested: access_token holds an ID token of the subject, token_type N_A, issued_token_type id_token', async () => {
      const own = await subjectAt(app, plain);
      const body = expectTokens(
        await exchange(app, { subject_token: own, subject_token_type: TYPE.accessToken, requested_token_type: TYPE.idToken, scope: 'openid' }),
      );
      assert.equal(body.token_type, 'N_A');
      assert.equal(body.issued_token_type, TYPE.idToken);
      assert.equal(body.scope, 'openid');
      const { payload, protectedHeader } = await jwtVerify(body.access_token, jwks, { issuer: world.issuer, audience: app.clientId });
      assert.equal(payload.sub, plain.userId);
      assert.notEqual(protectedHeader.typ, 'at+jwt');
      // It is an ID token, not an access token: introspection does not know it.
      assert.equal((await world.introspect(app, body.access_token)).active, false);
    });

    test('an ID token presented as an access_token is refused (invalid_grant)', async () => {
      const own = await tokensOf(plain);
      expectError(await exchange(app, { subject_token: own.id_token, subject_token_type: TYPE.accessToken }), 400, 'invalid_grant');
    });

    test('a revoked JWT access token is no ID token either: presented as id_token it is refused (invalid_grant)', async () => {
      const issued = expectTokens(
        await exchange(app, { subject_token: await subjectAt(app, plain), subject_token_type: TYPE.accessToken, requested_token_type: TYPE.jwt }),
      );
      await world.revoke(app, issued.access_token);
      assert.equal((await world.introspect(app, issued.access_token)).active, false);
      expectError(await exchange(app, { subject_token: issued.access_token, subject_token_type: TYPE.accessToken }), 400, 'invalid_grant');
      expectError(await exchange(app, { subject_token: issued.access_token, subject_token_type: TYPE.idToken }), 400, 'invalid_grant');
    });
  });

  describe('jwt: signed by the client, only together with an actor_token', () => {
    let actor: string;
    before(async () => {
      actor = (await tokensOf(iamImpersonator)).access_token;
    });

    test("a JWT signed by the app's registered key (iss = client_id) is accepted as subject together with an actor_token", async () => {
      const { keyId, privateKey } = appKey(keyApp);
      const subject = await signedJwt(privateKey, keyId, { iss: keyApp.clientId, sub: alice });
      const body = expectTokens(
        await exchange(keyApp, { subject_token: subject, subject_token_type: TYPE.jwt, actor_token: actor, actor_token_type: TYPE.accessToken }),
      );
      await assertActiveFor(keyApp, body.access_token, alice, iamImpersonator.userId);
    });

    test('without an actor_token: invalid_request', async () => {
      const { keyId, privateKey } = appKey(keyApp);
      const subject = await signedJwt(privateKey, keyId, { iss: keyApp.clientId, sub: alice });
      expectError(await exchange(keyApp, { subject_token: subject, subject_token_type: TYPE.jwt }), 400, 'invalid_request');
    });

    test('signed by another key, naming another issuer, or by an app without registered keys: invalid_grant', async () => {
      const { keyId, privateKey } = appKey(keyApp);
      const withActor = { subject_token_type: TYPE.jwt, actor_token: actor, actor_token_type: TYPE.accessToken };
      const forged = await signedJwt(strangerKey, keyId, { iss: keyApp.clientId, sub: alice });
      expectError(await exchange(keyApp, { subject_token: forged, ...withActor }), 400, 'invalid_grant');
      const otherIssuer = await signedJwt(privateKey, keyId, { iss: app.clientId, sub: alice });
      expectError(await exchange(keyApp, { subject_token: otherIssuer, ...withActor }), 400, 'invalid_grant');
      // The key belongs to keyApp: app (client_secret_basic, no keys) cannot present it as its own.
      const foreign = await signedJwt(privateKey, keyId, { iss: app.clientId, sub: alice });
      expectError(await exchange(app, { subject_token: foreign, ...withActor }), 400, 'invalid_grant');
    });

    test('as actor_token: invalid_request', async () => {
      const { keyId, privateKey } = appKey(keyApp);
      const jwt = await signedJwt(privateKey, keyId, { iss: keyApp.clientId, sub: iamImpersonator.userId });
      expectError(
        await exchange(keyApp, { subject_token: alice, subject_token_type: TYPE.userId, actor_token: jwt, actor_token_type: TYPE.jwt }),
        400,
        'invalid_request',
      );
    });

    test('requested: the access token is a JWT (typ at+jwt) verifiable with the key set, issued_token_type jwt', async () => {
      const body = expectTokens(
        await exchange(app, {
          subject_token: alice,
          subject_token_type: TYPE.userId,
          actor_token: actor,
          actor_token_type: TYPE.accessToken,
          requested_token_type: TYPE.jwt,
          scope: 'openid profile',
        }),
      );
      assert.equal(body.issued_token_type, TYPE.jwt);
      assert.equal(body.token_type, 'Bearer');
      const { payload } = await jwtVerify(body.access_token, jwks, { issuer: world.issuer, typ: 'at+jwt', algorithms: ['RS256'] });
      assert.equal(payload.sub, alice);
      assert.equal(payload.client_id, app.clientId);
      assert.equal(payload.scope, 'openid profile');
      assert.deepEqual(payload.act, { sub: iamImpersonator.userId });
      await assertActiveFor(app, body.access_token, alice, iamImpersonator.userId);
    });
  });

  describe('user_id: a user id, only together with an actor_token', () => {
    let actor: string;
    before(async () => {
      actor = (await tokensOf(iamImpersonator)).access_token;
    });

    test('accepted as subject together with an actor_token', async () => {
      const body = expectTokens(
        await exchange(app, { subject_token: alice, subject_token_type: TYPE.userId, actor_token: actor, actor_token_type: TYPE.accessToken }),
      );
      await assertActiveFor(app, body.access_token, alice, iamImpersonator.userId);
    });

    test('without an actor_token: invalid_request', async () => {
      expectError(await exchange(app, { subject_token: alice, subject_token_type: TYPE.userId }), 400, 'invalid_request');
    });

    test('as actor_token: invalid_request', async () => {
      const subject = await subjectAt(app, plain);
      expectError(
        await exchange(app, {
          subject_token: subject,
          subject_token_type: TYPE.accessToken,
          actor_token: iamImpersonator.userId,
          actor_token_type: TYPE.userId,
        }),
        400,
        'invalid_request',
      );
    });

    test('as requested_token_type: invalid_request', async () => {
      const outcome = await exchange(app, {
        subject_token: alice,
        subject_token_type: TYPE.userId,
        actor_token: actor,
        actor_token_type: TYPE.accessToken,
        requested_token_type: TYPE.userId,
      });
      expectError(outcome, 400, 'invalid_request');
    });

    test('a user id that is no user: invalid_grant', async () => {
      for (const nobody of ['000000000000000000', 'alice', ' ', "x' OR '1'='1", 'x'.repeat(10_000)]) {
        expectError(
          await exchange(app, { subject_token: nobody, subject_token_type: TYPE.userId, actor_token: actor, actor_token_type: TYPE.accessToken }),
          400,
          'invalid_grant',
        );
      }
    });
  });
});

// ---- the response fields

describe('the exchange response (RFC 8693 2.2.1, docs/oidc.md)', () => {
  before(() => world.setTokenExchange(true));

  test('issued_token_type always matches the requested type (default: access_token)', async () => {
    const cases: Array<[string | undefined, string]> = [
      [undefined, TYPE.accessToken],
      [TYPE.accessToken, TYPE.accessToken],
      [TYPE.jwt, TYPE.jwt],
      [TYPE.idToken, TYPE.idToken],
    ];
    for (const [requested, issued] of cases) {
      const subject = await subjectAt(app, plain);
      const body = expectTokens(
        await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, ...(requested ? { requested_token_type: requested } : {}) }),
      );
      assert.equal(body.issued_token_type, issued, `requested ${requested}`);
      assert.equal(body.token_type, requested === TYPE.idToken ? 'N_A' : 'Bearer');
      assert.equal(typeof body.expires_in, 'number');
      assert.ok(body.expires_in > 0);
    }
  });

  test('scope is always present; id_token only with openid; refresh_token only with offline_access', async () => {
    // The subject token has "openid profile offline_access"; no scope parameter keeps it.
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'openid profile offline_access'],
      ['openid', 'openid'],
      ['openid offline_access', 'openid offline_access'],
      ['profile', 'profile'],
      ['profile offline_access', 'profile offline_access'],
    ];
    for (const [scope, granted] of cases) {
      const subject = await subjectAt(app, plain);
      const body = expectTokens(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, ...(scope ? { scope } : {}) }));
      assert.equal(body.scope, granted, `scope for ${scope}`);
      const scopes = granted.split(' ');
      assert.equal('id_token' in body, scopes.includes('openid'), `id_token for ${granted}`);
      assert.equal('refresh_token' in body, scopes.includes('offline_access'), `refresh_token for ${granted}`);
      if (body.id_token) {
        const { payload } = await jwtVerify(body.id_token, jwks, { issuer: world.issuer, audience: app.clientId });
        assert.equal(payload.sub, plain.userId);
      }
    }
    for (const requested of [TYPE.jwt, TYPE.idToken]) {
      const subject = await subjectAt(app, plain);
      const body = expectTokens(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, requested_token_type: requested }));
      assert.equal(body.scope, 'openid profile offline_access', `scope of requested ${requested}`);
    }
  });

  test('the refresh token works at the refresh grant, and the refreshed token still carries act', async () => {
    const body = await impersonatedHolding(app, alice, 'openid profile offline_access');
    assert.ok(body.refresh_token, 'offline_access gives a refresh token');
    await assertActiveFor(app, body.access_token, alice, iamImpersonator.userId);
    const refreshed = await client.refreshTokenGrant(world.configOf(app), body.refresh_token);
    assert.ok(refreshed.access_token && refreshed.access_token !== body.access_token);
    assert.equal(refreshed.scope, 'openid profile offline_access');
    const info = await assertActiveFor(app, refreshed.access_token, alice, iamImpersonator.userId);
    assert.equal(info.client_id, app.clientId);
    assert.ok(refreshed.refresh_token, 'refresh tokens rotate');
    const again = await client.refreshTokenGrant(world.configOf(app), refreshed.refresh_token, { scope: 'openid' });
    await assertActiveFor(app, again.access_token, alice, iamImpersonator.userId);
  });
});

describe('where the grant of an exchanged token is kept', () => {
  before(() => world.setTokenExchange(true));

  /** Grant records in PostgreSQL and Redis of this server. */
  async function grantRecords(): Promise<number> {
    const { db, redis } = world.server.running;
    const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM engine_records WHERE model = 'Grant'");
    const keys = redis ? await redis.keys(`${world.server.config.redisPrefix}Grant:*`) : [];
    return rows[0]!.n + keys.length;
  }

  test('without refresh token: the grant expires with the access token and is stored beside it (Redis when set), and act still reaches introspection', async () => {
    const body = await impersonated(app, alice, { scope: 'openid profile' });
    assert.equal(body.refresh_token, undefined);
    const grant = await storedGrantOf(world.server, body.access_token);
    assert.ok(grant.ttl > body.expires_in - 5 && grant.ttl <= body.expires_in + 1, `grant lives ${grant.ttl} s, the token ${body.expires_in} s`);
    assert.equal(grant.inRedis, Boolean(REDIS_URL));
    assert.equal(grant.inPostgres, !REDIS_URL);
    await assertActiveFor(app, body.access_token, alice, iamImpersonator.userId);
  });

  test('with a refresh token: the grant is durable (PostgreSQL) and lives as long as a refresh token may', async () => {
    const body = await impersonatedHolding(app, alice, 'openid profile offline_access');
    assert.ok(body.refresh_token);
    const grant = await storedGrantOf(world.server, body.access_token);
    assert.deepEqual([grant.inPostgres, grant.inRedis], [true, false]);
    const absolute = world.server.config.refreshTokenAbsoluteLifetime;
    assert.ok(grant.ttl > absolute - 60 && grant.ttl <= absolute + 1, `grant lives ${grant.ttl} s, refresh tokens at most ${absolute} s`);
  });

  test('requested id_token: no grant is stored, as no token names one', async () => {
    const subject = await subjectAt(app, plain);
    const before = await grantRecords();
    expectTokens(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, requested_token_type: TYPE.idToken }));
    assert.equal(await grantRecords(), before);
  });
});

// ---- impersonation

describe('impersonation: a subject other than the actor (docs/security.md)', () => {
  before(() => world.setTokenExchange(true));

  test('an actor without an impersonator role: invalid_request "impersonation not permitted"', async () => {
    const actor = (await tokensOf(plain)).access_token;
    const asUser = await exchange(app, { subject_token: alice, subject_token_type: TYPE.userId, actor_token: actor, actor_token_type: TYPE.accessToken });
    expectError(asUser, 400, 'invalid_request', /impersonation not permitted/);
    const someoneElse = await subjectAt(app, jwtUser);
    const asToken = await exchange(app, {
      subject_token: someoneElse,
      subject_token_type: TYPE.accessToken,
      actor_token: actor,
      actor_token_type: TYPE.accessToken,
    });
    expectError(asToken, 400, 'invalid_request', /impersonation not permitted/);
  });

  test('IAM_END_USER_IMPERSONATOR: allowed in any org; introspection by the app shows sub = subject and act = actor', async () => {
    for (const subject of [alice, bob]) {
      const body = await impersonated(app, subject);
      const info = await assertActiveFor(app, body.access_token, subject, iamImpersonator.userId);
      assert.equal(info.client_id, app.clientId);
    }
    // A token of another user as subject works the same.
    const actor = (await tokensOf(iamImpersonator)).access_token;
    const subject = await subjectAt(app, plain);
    const body = expectTokens(
      await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, actor_token: actor, actor_token_type: TYPE.accessToken }),
    );
    await assertActiveFor(app, body.access_token, plain.userId, iamImpersonator.userId);
  });

  test("ORG_END_USER_IMPERSONATOR in the subject's org: allowed", async () => {
    const actor = (await tokensOf(orgImpersonator)).access_token;
    const body = expectTokens(
      await exchange(app, { subject_token: alice, subject_token_type: TYPE.userId, actor_token: actor, actor_token_type: TYPE.accessToken }),
    );
    await assertActiveFor(app, body.access_token, alice, orgImpersonator.userId);
  });

  test('ORG_END_USER_IMPERSONATOR of another org: invalid_request "impersonation not permitted"', async () => {
    const actor = (await tokensOf(orgImpersonator)).access_token;
    const outcome = await exchange(app, { subject_token: bob, subject_token_type: TYPE.userId, actor_token: actor, actor_token_type: TYPE.accessToken });
    expectError(outcome, 400, 'invalid_request', /impersonation not permitted/);
  });

  test('acting for oneself needs no role and adds no act', async () => {
    const own = await tokensOf(plain);
    const body = expectTokens(
      await exchange(app, {
        subject_token: await subjectAt(app, plain),
        subject_token_type: TYPE.accessToken,
        actor_token: own.access_token,
        actor_token_type: TYPE.accessToken,
      }),
    );
    await assertActiveFor(app, body.access_token, plain.userId);
  });
});

// ---- audience

describe('audience: a subset of the audiences of the subject and actor tokens (RFC 8693 2.1, docs/oidc.md)', () => {
  /** A token of plain issued to app: its audience is app and project A. */
  let subject: string;
  /** A token of the IAM impersonator issued to otherApp: otherApp and project B. */
  let actor: string;
  before(async () => {
    await world.setTokenExchange(true);
    subject = (await tokenAt(app, plain)).access_token;
    actor = (await tokenAt(otherApp, iamImpersonator)).access_token;
  });
  const withSubject = () => ({ subject_token: subject, subject_token_type: TYPE.accessToken });
  const withActor = () => ({ ...withSubject(), actor_token: actor, actor_token_type: TYPE.accessToken });

  test("an audience of the subject token (its app or the app's project) is allowed", async () => {
    for (const audience of [app.clientId, app.projectId]) expectTokens(await exchange(app, { ...withSubject(), audience }));
  });

  test('an audience of the actor token is allowed', async () => {
    for (const audience of [otherApp.clientId, otherApp.projectId]) expectTokens(await exchange(app, { ...withActor(), audience }));
  });

  test('any other audience: invalid_target', async () => {
    for (const audience of ['https://elsewhere.example.com', otherApp.clientId, keyApp.clientId, `${app.clientId}x`]) {
      expectError(await exchange(app, { ...withSubject(), audience }), 400, 'invalid_target');
    }
  });

  test('repeated audience values: each must be among them', async () => {
    expectTokens(await exchange(app, { ...withSubject(), audience: [app.clientId, app.projectId] }));
    expectTokens(await exchange(app, { ...withActor(), audience: [app.clientId, otherApp.clientId] }));
    expectError(await exchange(app, { ...withSubject(), audience: [app.clientId, 'https://elsewhere.example.com'] }), 400, 'invalid_target');
    expectError(await exchange(app, { ...withSubject(), audience: [app.clientId, otherApp.clientId] }), 400, 'invalid_target');
  });

  test('the new token is for the requested audience: that app finds it active at introspection, and may exchange it in turn', async () => {
    const body = expectTokens(await exchange(app, { ...withActor(), audience: otherApp.clientId }));
    const info = await assertActiveFor(otherApp, body.access_token, plain.userId, iamImpersonator.userId);
    const aud = Array.isArray(info.aud) ? info.aud : [info.aud];
    assert.ok(aud.includes(otherApp.clientId), `aud ${JSON.stringify(info.aud)}`);
    expectTokens(await exchange(otherApp, { subject_token: body.access_token, subject_token_type: TYPE.accessToken, scope: 'openid' }));
  });

  test('a subject access token issued to another app (outside its project) cannot be exchanged: invalid_grant', async () => {
    expectError(await exchange(otherApp, withSubject()), 400, 'invalid_grant', /not issued to this client/);
  });
});

// ---- scope

describe('scope (docs/security.md: token exchange narrows, never widens)', () => {
  before(() => world.setTokenExchange(true));

  test("a scope narrower than the subject token's: the response scope is the narrower one", async () => {
    const subject = await subjectAt(app, plain);
    const body = expectTokens(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, scope: 'openid' }));
    assert.equal(body.scope, 'openid');
    const info = await assertActiveFor(app, body.access_token, plain.userId);
    assert.equal(info.scope, 'openid');
  });

  test("a scope wider than the subject token's: invalid_scope", async () => {
    const subject = await subjectAt(app, plain, 'openid');
    for (const scope of ['openid profile', 'openid offline_access', 'email']) {
      expectError(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, scope }), 400, 'invalid_scope');
    }
  });

  test('an unknown scope: invalid_scope', async () => {
    const subject = await subjectAt(app, plain);
    expectError(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, scope: 'openid bogus' }), 400, 'invalid_scope');
  });
});

// ---- bad requests

describe('bad requests (RFC 6749 5.2, RFC 8693 2.2.2)', () => {
  let subject: string;
  let actor: string;
  before(async () => {
    await world.setTokenExchange(true);
    subject = await subjectAt(app, plain);
    actor = (await tokensOf(iamImpersonator)).access_token;
  });

  test('a resource parameter: invalid_target', async () => {
    for (const resource of ['https://api.example.com', app.clientId]) {
      expectError(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, resource }), 400, 'invalid_target');
    }
  });

  test('missing subject_token or subject_token_type: invalid_request', async () => {
    expectError(await exchange(app, { subject_token_type: TYPE.accessToken }), 400, 'invalid_request');
    expectError(await exchange(app, { subject_token: subject }), 400, 'invalid_request');
    expectError(await exchange(app, {}), 400, 'invalid_request');
  });

  test('actor_token_type without actor_token, or actor_token without actor_token_type: invalid_request', async () => {
    expectError(
      await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, actor_token_type: TYPE.accessToken }),
      400,
      'invalid_request',
    );
    expectError(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, actor_token: actor }), 400, 'invalid_request');
  });

  test('unknown token type identifiers: invalid_request', async () => {
    for (const unknown of ['urn:ietf:params:oauth:token-type:saml2', 'urn:example:token-type:mine', 'access_token']) {
      expectError(await exchange(app, { subject_token: subject, subject_token_type: unknown }), 400, 'invalid_request');
      expectError(
        await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, actor_token: actor, actor_token_type: unknown }),
        400,
        'invalid_request',
      );
      expectError(await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, requested_token_type: unknown }), 400, 'invalid_request');
    }
  });

  test('garbage subject tokens: invalid_grant', async () => {
    /** An at+jwt for alice signed by a stranger, naming `issuer` and `kid`. */
    const strangerAccessToken = (issuer: string, kid: string) =>
      new SignJWT({ scope: 'openid' })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setSubject(alice)
        .setAudience(app.clientId)
        .setIssuedAt()
        .setExpirationTime('5m')
        .setJti(randomUUID())
        .sign(strangerKey);
    const foreign = await strangerAccessToken('https://other-issuer.example.com', 'foreign');
    // Our issuer and a kid of ours, but signed by a stranger.
    const forged = await strangerAccessToken(world.issuer, decodeProtectedHeader((await tokensOf(plain)).id_token).kid!);
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: world.issuer, sub: alice })).toString('base64url')}.`;
    const garbage = [
      randomBytes(32).toString('base64url'),
      'not a token',
      'a.b.c',
      'eyJ.eyJ.eyJ',
      unsigned,
      `${subject}x`,
      'x'.repeat(10_000),
      foreign,
      forged,
    ];
    for (const value of garbage) {
      for (const type of [TYPE.accessToken, TYPE.idToken]) {
        expectError(await exchange(app, { subject_token: value, subject_token_type: type }), 400, 'invalid_grant');
      }
      const withActor = { actor_token: actor, actor_token_type: TYPE.accessToken };
      expectError(await exchange(keyApp, { subject_token: value, subject_token_type: TYPE.jwt, ...withActor }), 400, 'invalid_grant');
    }
    // And as actor tokens (an ID token is no actor whatever it holds: invalid_request).
    for (const value of [randomBytes(32).toString('base64url'), 'a.b.c', foreign, forged]) {
      for (const [type, error] of [
        [TYPE.accessToken, 'invalid_grant'],
        [TYPE.idToken, 'invalid_request'],
      ] as const) {
        expectError(
          await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, actor_token: value, actor_token_type: type }),
          400,
          error,
        );
      }
    }
  });

  test('tokens and user ids with a NUL byte: invalid_request (a malformed request), never a 500', async () => {
    const nul = 'nul\u0000byte';
    const withActor = { actor_token: actor, actor_token_type: TYPE.accessToken };
    const requests: Array<[App, Record<string, string>]> = [
      [app, { subject_token: nul, subject_token_type: TYPE.accessToken }],
      [app, { subject_token: `${subject}\u0000`, subject_token_type: TYPE.accessToken }],
      [app, { subject_token: nul, subject_token_type: TYPE.idToken }],
      [keyApp, { subject_token: nul, subject_token_type: TYPE.jwt, ...withActor }],
      [app, { subject_token: nul, subject_token_type: TYPE.userId, ...withActor }],
      [app, { subject_token: subject, subject_token_type: TYPE.accessToken, actor_token: nul, actor_token_type: TYPE.accessToken }],
    ];
    const failures: string[] = [];
    for (const [by, params] of requests) {
      const outcome = await world.exchange(by, params, { allowServerError: true });
      if (outcome.answer.status !== 400 || outcome.answer.body?.error !== 'invalid_request')
        failures.push(`${JSON.stringify(params).slice(0, 160)} → ${outcome.answer.status} ${outcome.answer.text}`);
    }
    assert.deepEqual(failures, []);
  });

  test('a repeated subject_token (or other single parameter): invalid_request', async () => {
    const other = await subjectAt(app, plain);
    expectError(await exchange(app, { subject_token: [subject, other], subject_token_type: TYPE.accessToken }), 400, 'invalid_request');
    expectError(await exchange(app, { subject_token: [subject, subject], subject_token_type: TYPE.accessToken }), 400, 'invalid_request');
    expectError(await exchange(app, { subject_token: subject, subject_token_type: [TYPE.accessToken, TYPE.accessToken] }), 400, 'invalid_request');
    expectError(
      await exchange(app, { subject_token: subject, subject_token_type: TYPE.accessToken, actor_token: [actor, actor], actor_token_type: TYPE.accessToken }),
      400,
      'invalid_request',
    );
  });

  test('a revoked subject access token: invalid_grant', async () => {
    for (const requested of [TYPE.accessToken, TYPE.jwt]) {
      const issued = (await tokenAt(app, plain, { requested_token_type: requested })).access_token;
      expectTokens(await exchange(app, { subject_token: issued, subject_token_type: TYPE.accessToken }));
      await world.revoke(app, issued);
      expectError(await exchange(app, { subject_token: issued, subject_token_type: TYPE.accessToken }), 400, 'invalid_grant');
      // As actor it is just as dead.
      expectError(
        await exchange(app, { subject_token: plain.userId, subject_token_type: TYPE.userId, actor_token: issued, actor_token_type: TYPE.accessToken }),
        400,
        'invalid_grant',
      );
    }
  });

  test('an expired subject access token: invalid_grant', async () => {
    const provider = world.server.running.engine.provider;
    const appClient = await provider.Client.find(app.clientId);
    assert.ok(appClient);
    const issuedAt = Math.floor(Date.now() / 1000);
    const token = new provider.AccessToken({ accountId: plain.userId, client: appClient, scope: 'openid', expiresIn: 2 } as never);
    const value = await token.save();
    expectTokens(await exchange(app, { subject_token: value, subject_token_type: TYPE.accessToken }));
    // Expired at issuedAt + 2 at the latest (the clock may have ticked once since).
    await new Promise((resolve) => setTimeout(resolve, (issuedAt + 3) * 1000 + 200 - Date.now()));
    expectError(await exchange(app, { subject_token: value, subject_token_type: TYPE.accessToken }), 400, 'invalid_grant');
  });

  test('client authentication with a wrong secret: 401 invalid_client', async () => {
    const wrong: App = { ...app, auth: client.ClientSecretBasic(`${app.clientSecret}x`) };
    const outcome = await exchange(wrong, { subject_token: subject, subject_token_type: TYPE.accessToken });
    expectError(outcome, 401, 'invalid_client');
    const unknown: App = { ...app, clientId: 'no-such-client', auth: client.ClientSecretBasic('secret') };
    expectError(await exchange(unknown, { subject_token: subject, subject_token_type: TYPE.accessToken }), 401, 'invalid_client');
  });

  test('an app without the token exchange grant type: unauthorized_client', async () => {
    expectError(await exchange(noExchangeApp, { subject_token: subject, subject_token_type: TYPE.accessToken }), 400, 'unauthorized_client');
  });
});
