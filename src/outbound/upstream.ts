import * as oidc from 'openid-client';
import type { HttpUpstream } from '../domain/idps.ts';
import type { OutboundClient, OutboundFetch } from './client.ts';
import { OutboundError } from './errors.ts';

/**
 * The login's side of an external provider (docs/idps.md), on openid-client:
 * discovery, the authorization request (code flow, PKCE S256, state, nonce)
 * and the redemption of its answer. Every request goes through the fetch
 * handed in, the outbound client's, so it is checked like any other call to
 * another host.
 */

/** What the upstream said about the user, in our words. */
export interface ExternalIdentity {
  /** The upstream's stable id of the user (`sub`, or the user endpoint's `idAttribute`). */
  id: string;
  preferredUsername?: string;
  email?: string;
  emailVerified: boolean;
  givenName?: string;
  familyName?: string;
  displayName?: string;
  locale?: string;
  /** A phone number, as the upstream wrote it (an LDAP provider's phoneAttribute). */
  phone?: string;
  /** The upstream's own `amr` (RFC 8176), if its ID token said. */
  amr: string[];
}

/** Why the upstream could not be used: `unreachable` (down, slow, refused address) or `invalid` (an answer that failed a check). */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly reason: 'unreachable' | 'invalid';
  constructor(reason: 'unreachable' | 'invalid', message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The checks a callback is redeemed with: what the login kept server side when it sent the browser off. */
export interface LoginChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

const TIMEOUT_SECONDS = 5;

/**
 * The outbound fetch for a provider: an instance-level one (IAM_OWNER's)
 * may reach loopback and private addresses (an intranet IdP), an org's
 * only while OUTBOUND_ALLOW_PRIVATE is on.
 */
export function providerFetch(outbound: Pick<OutboundClient, 'fetcher'>): (scope: { orgId: string | null }) => OutboundFetch {
  const instance = outbound.fetcher({ trust: 'instance' });
  const org = outbound.fetcher({ trust: 'app' });
  return (scope) => (scope.orgId === null ? instance : org);
}

/** Any failure of a call to an upstream, as an UpstreamError (the outbound client's refusals and timeouts: unreachable). */
export function upstreamError(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (err instanceof OutboundError || cause instanceof OutboundError)
    return new UpstreamError('unreachable', (cause instanceof OutboundError ? cause : (err as Error)).message);
  if (err instanceof TypeError && !(err instanceof oidc.ClientError)) return new UpstreamError('unreachable', 'the provider could not be reached');
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  return new UpstreamError('invalid', `${typeof code === 'string' ? `${code}: ` : ''}${message}`.slice(0, 300));
}

function insecure(url: string): boolean {
  return new URL(url).protocol === 'http:';
}

/**
 * The upstream's configuration: discovered from the issuer (OIDC), or made
 * of the configured endpoints (OAuth). The signature of an ID token is
 * checked by the caller of `redeem` (src/outbound/upstream-cache.ts keeps
 * the issuer's JWKS), also for ID tokens from the token endpoint.
 */
export async function upstreamConfiguration(upstream: HttpUpstream, clientSecret: string, fetch: OutboundFetch): Promise<oidc.Configuration> {
  const customFetch = fetch as unknown as oidc.CustomFetch;
  try {
    if (upstream.protocol === 'oidc') {
      const config = await oidc.discovery(new URL(upstream.issuer), upstream.clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
        [oidc.customFetch]: customFetch,
        timeout: TIMEOUT_SECONDS,
        execute: insecure(upstream.issuer) ? [oidc.allowInsecureRequests] : [],
      });
      return config;
    }
    const config = new oidc.Configuration(
      {
        issuer: new URL(upstream.authorizationEndpoint).origin,
        authorization_endpoint: upstream.authorizationEndpoint,
        token_endpoint: upstream.tokenEndpoint,
      },
      upstream.clientId,
      undefined,
      oidc.ClientSecretPost(clientSecret),
    );
    config[oidc.customFetch] = customFetch;
    config.timeout = TIMEOUT_SECONDS;
    if ([upstream.authorizationEndpoint, upstream.tokenEndpoint, upstream.userEndpoint].some(insecure)) oidc.allowInsecureRequests(config);
    return config;
  } catch (err) {
    throw upstreamError(err);
  }
}

/** Fresh state, nonce and PKCE verifier for one trip to the upstream. */
export function newLoginChecks(): LoginChecks {
  return { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() };
}

/** Where the browser goes: the upstream's authorization endpoint with code flow, PKCE S256, state and (OIDC) nonce. */
export async function authorizationUrl(config: oidc.Configuration, upstream: HttpUpstream, checks: LoginChecks, redirectUri: string): Promise<URL> {
  const parameters: Record<string, string> = {
    redirect_uri: redirectUri,
    response_type: 'code',
    state: checks.state,
    code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
    code_challenge_method: 'S256',
  };
  if (upstream.scopes.length) parameters.scope = upstream.scopes.join(' ');
  if (upstream.protocol === 'oidc') parameters.nonce = checks.nonce;
  return oidc.buildAuthorizationUrl(config, parameters);
}

const AMR_VALUE = /^[A-Za-z0-9_-]{1,32}$/;

const asString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value.slice(0, 200) : typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : undefined;

/** The profile of OIDC claims (OIDC Core 5.1). */
function fromClaims(claims: Record<string, unknown>, amr: unknown): ExternalIdentity {
  const id = asString(claims.sub);
  if (!id) throw new UpstreamError('invalid', 'the provider named no subject');
  return {
    id,
    preferredUsername: asString(claims.preferred_username),
    email: asString(claims.email),
    emailVerified: claims.email_verified === true,
    givenName: asString(claims.given_name),
    familyName: asString(claims.family_name),
    displayName: asString(claims.name),
    locale: asString(claims.locale),
    amr: Array.isArray(amr) ? amr.filter((v): v is string => typeof v === 'string' && AMR_VALUE.test(v)).slice(0, 10) : [],
  };
}

/** The profile of a GitHub-style user endpoint: `idAttribute`, `login`, `name`, `email`. */
function fromUserEndpoint(user: Record<string, unknown>, idAttribute: string): ExternalIdentity {
  const id = asString(user[idAttribute]);
  if (!id) throw new UpstreamError('invalid', `the user endpoint's answer has no ${idAttribute}`);
  const name = asString(user.name);
  const [givenName, ...rest] = (name ?? '').split(' ');
  return {
    id,
    preferredUsername: asString(user.login),
    email: asString(user.email),
    emailVerified: false,
    givenName: givenName || undefined,
    familyName: rest.join(' ') || undefined,
    displayName: name,
    amr: [],
  };
}

/** Checks an ID token's signature against the issuer's keys; throws an UpstreamError when it does not hold. */
export type SignatureCheck = (idToken: string) => Promise<void>;

/**
 * Redeems the upstream's answer (`callbackUrl`, the callback's URL with its
 * query): state and PKCE checked, the code exchanged, the ID token checked
 * (iss, aud, exp, nonce, and its signature by `checkSignature`); the user's
 * claims from the ID token or userinfo, or the user endpoint's JSON.
 */
export async function redeem(
  config: oidc.Configuration,
  upstream: HttpUpstream,
  callbackUrl: URL,
  checks: LoginChecks,
  checkSignature: SignatureCheck,
): Promise<ExternalIdentity> {
  try {
    if (upstream.protocol === 'oidc') {
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      await checkSignature(tokens.id_token!);
      const claims = tokens.claims()!;
      if (upstream.isIdTokenMapping) return fromClaims(claims, claims.amr);
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      return fromClaims(userinfo as Record<string, unknown>, claims.amr);
    }
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state });
    const response = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(upstream.userEndpoint), 'GET');
    if (!response.ok) throw new UpstreamError('invalid', `the user endpoint answered ${response.status}`);
    const user = (await response.json().catch(() => undefined)) as unknown;
    if (!user || typeof user !== 'object' || Array.isArray(user)) throw new UpstreamError('invalid', 'the user endpoint answered no JSON object');
    return fromUserEndpoint(user as Record<string, unknown>, upstream.idAttribute);
  } catch (err) {
    throw upstreamError(err);
  }
}
