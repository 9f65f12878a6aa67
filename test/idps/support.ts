import type * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { startCodeFlow, type RelyingParty } from '../support/browser.ts';

/** A sign-in the test's app started: `finish` redeems the code the browser lands with and answers the ID token's claims. */
export interface StartedSignIn {
  finish(): Promise<Record<string, unknown>>;
}

/** Opens the app's authorization request (code flow with PKCE, state and nonce, the profile and email scopes) in `page`. */
export async function authorize(page: Page, config: client.Configuration, rp: RelyingParty): Promise<StartedSignIn> {
  const redeem = await startCodeFlow(page, config, rp, { scope: 'openid profile email' });
  return {
    async finish() {
      return (await redeem()).claims() as Record<string, unknown>;
    },
  };
}

/** The app's authorization request, then the login page's button of a provider (`Sign in with …`). */
export async function signInWith(page: Page, config: client.Configuration, rp: RelyingParty, button: string): Promise<StartedSignIn> {
  const started = await authorize(page, config, rp);
  await page.getByRole('button', { name: button }).click();
  return started;
}
