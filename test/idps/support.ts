import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import type { RelyingParty } from '../support/browser.ts';

/** A sign-in the test's app started: `finish` redeems the code the browser lands with and answers the ID token's claims. */
export interface StartedSignIn {
  finish(): Promise<Record<string, unknown>>;
}

/** Opens the app's authorization request (code flow with PKCE, state and nonce) in `page`. */
export async function authorize(page: Page, config: client.Configuration, rp: RelyingParty): Promise<StartedSignIn> {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedState = client.randomState();
  const expectedNonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: rp.callback,
    scope: 'openid profile email',
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    state: expectedState,
    nonce: expectedNonce,
  });
  await page.goto(url.href);
  return {
    async finish() {
      await page.waitForURL((u) => u.href.startsWith(rp.callback));
      const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier, expectedState, expectedNonce });
      return tokens.claims() as Record<string, unknown>;
    },
  };
}

/** The app's authorization request, then the login page's button of a provider (`Sign in with …`). */
export async function signInWith(page: Page, config: client.Configuration, rp: RelyingParty, button: string): Promise<StartedSignIn> {
  const started = await authorize(page, config, rp);
  await page.getByRole('button', { name: button }).click();
  return started;
}
