import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { API_SCOPE } from '../../src/engine/claims.ts';
import { startExchangeWorld, type App, type ExchangeWorld, type SignInUser } from '../support/exchange.ts';

// What a complete sign-in (browser-less code flow: login name, password,
// the code exchange) costs in interactions and grant writes: one
// interaction, also with offline_access (whose consent prompt the sign-in
// settles: our apps need no consent page), and the grant saved once, when
// it is made, not each time the engine passes the first-party rule
// (docs/decisions.md). The tokens are the same.

describe('the writes of a sign-in', () => {
  let world: ExchangeWorld;
  let app: App;
  let user: SignInUser;
  let savedGrants = 0;
  let seenInteractions: string[] = [];

  before(async () => {
    world = await startExchangeWorld();
    const project = await world.createProject('Writes');
    app = await world.createApp(project, 'Writes app', { grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'] });
    user = await world.createSignInUser(`writes-${Date.now()}`);
    const { provider } = world.server.running.engine;
    provider.on('grant.saved', () => {
      savedGrants++;
    });
    provider.on('interaction.started', (_ctx: unknown, prompt: { name: string }) => {
      seenInteractions.push(prompt.name);
    });
  });

  after(async () => {
    await world?.stop();
  });

  /** One complete sign-in with `scope`: its tokens, and the interactions and grant writes it took. */
  async function signIn(scope: string) {
    savedGrants = 0;
    seenInteractions = [];
    const tokens = await world.codeFlow(app, user, scope);
    return { tokens, interactions: seenInteractions, grantSaves: savedGrants };
  }

  test('openid: one interaction (login), the grant saved once and holding the scopes of the tokens', async () => {
    const { tokens, interactions, grantSaves } = await signIn('openid profile');
    assert.deepEqual(interactions, ['login']);
    assert.equal(grantSaves, 1);
    assert.equal(decodeJwt(tokens.id_token!).sub, user.userId);
    assert.deepEqual(new Set(tokens.scope?.split(' ')), new Set(['openid', 'profile']));
    assert.equal(tokens.refresh_token, undefined);
  });

  test('with offline_access: the same (no consent interaction; before, a second interaction and three grant writes), and a refresh token', async () => {
    const { tokens, interactions, grantSaves } = await signIn('openid offline_access');
    assert.deepEqual(interactions, ['login']);
    assert.equal(grantSaves, 1);
    assert.ok(tokens.refresh_token, 'a refresh token');
    assert.deepEqual(new Set(tokens.scope?.split(' ')), new Set(['openid', 'offline_access']));
  });

  test('the API scope, which the app may not have, is still left out: it is rejected in the grant, written with it', async () => {
    const { tokens, interactions, grantSaves } = await signIn(`openid offline_access ${API_SCOPE}`);
    assert.deepEqual(interactions, ['login']);
    assert.equal(grantSaves, 1);
    assert.ok(!tokens.scope?.split(' ').includes(API_SCOPE));
  });
});
