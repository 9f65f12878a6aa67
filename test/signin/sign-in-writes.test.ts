import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { API_SCOPE } from '../../src/engine/claims.ts';
import { startExchangeWorld, type App, type ExchangeWorld, type SignInUser } from '../support/exchange.ts';

// What a complete sign-in (browser-less code flow: login name, password,
// the consent step that offline_access takes, the code exchange) writes of
// its grant: the grant is saved when it changes, not each of the three
// times the sign-in passes the first-party rule (docs/decisions.md). The
// tokens are the same.

describe('the writes of a sign-in', () => {
  let world: ExchangeWorld;
  let app: App;
  let user: SignInUser;
  let grantSaves = 0;

  before(async () => {
    world = await startExchangeWorld();
    const project = await world.createProject('Writes');
    app = await world.createApp(project, 'Writes app', { grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'] });
    user = await world.createSignInUser(`writes-${Date.now()}`);
    world.server.running.engine.provider.on('grant.saved', () => {
      grantSaves++;
    });
  });

  after(async () => {
    await world?.stop();
  });

  test('openid: the grant is saved once, and holds the scopes of the tokens', async () => {
    grantSaves = 0;
    const tokens = await world.codeFlow(app, user, 'openid profile');
    assert.equal(grantSaves, 1);
    assert.equal(decodeJwt(tokens.id_token!).sub, user.userId);
    assert.deepEqual(new Set(tokens.scope?.split(' ')), new Set(['openid', 'profile']));
    assert.equal(tokens.refresh_token, undefined);
  });

  test('with offline_access: once too (the consent step and the return to the engine find the grant complete; they wrote it again before), and a refresh token', async () => {
    grantSaves = 0;
    const tokens = await world.codeFlow(app, user, 'openid offline_access');
    assert.equal(grantSaves, 1);
    assert.ok(tokens.refresh_token, 'a refresh token');
    assert.deepEqual(new Set(tokens.scope?.split(' ')), new Set(['openid', 'offline_access']));
  });

  test('the API scope, which the app may not have, is still left out: it is rejected in the grant, written with it', async () => {
    grantSaves = 0;
    const tokens = await world.codeFlow(app, user, `openid offline_access ${API_SCOPE}`);
    assert.equal(grantSaves, 1);
    assert.ok(!tokens.scope?.split(' ').includes(API_SCOPE));
  });
});
