import { compactVerify, createLocalJWKSet, errors, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';
import type { HttpUpstream } from '../domain/idps.ts';
import type { IdpMetadata } from '../domain/saml/idp-metadata.ts';
import type { SamlSettings } from '../domain/saml/sp-kind.ts';
import type { OutboundFetch } from './client.ts';
import { fetchIdpMetadata, givenMetadata } from './saml-metadata.ts';
import { type SignatureCheck, UpstreamError, upstreamConfiguration, upstreamError } from './upstream.ts';

/**
 * Each provider's discovery document and JWKS, or a SAML provider's IdP
 * metadata read by URL, kept between sign-ins (docs/idps.md "Caching"):
 * without it every sign-in would fetch them from the upstream. An entry belongs to one version of the provider (its row's
 * sequence): every sign-in reads that row anyway, so a changed provider is
 * fetched afresh on every node at its next sign-in, with no message to lose.
 */

/** The provider as stored: its id and the sequence of its last write. */
export interface CachedIdp {
  id: string;
  sequence: string;
}

export interface UpstreamCache {
  /** The provider's configuration, discovered at most once per lifetime of its discovery document. */
  configuration(idp: CachedIdp, upstream: HttpUpstream, secret: string, fetch: OutboundFetch): Promise<oidc.Configuration>;
  /** Checks ID token signatures against the issuer's cached JWKS. */
  signatureCheck(idp: CachedIdp, config: oidc.Configuration, fetch: OutboundFetch): SignatureCheck;
  /** A SAML provider's IdP metadata: given, or fetched from its URL at most once per lifetime of the answer. */
  samlMetadata(idp: CachedIdp, settings: Pick<SamlSettings, 'metadata'>, fetch: OutboundFetch): Promise<IdpMetadata>;
}

const MINUTE = 60_000;
/** Without a Cache-Control max-age (RFC 9111 5.2.2.1). */
export const DEFAULT_LIFETIME_MS = 5 * MINUTE;
/** However long the upstream allows, a rotated key, certificate or moved endpoint is seen within a day. */
export const MAX_LIFETIME_MS = 24 * 60 * MINUTE;
/** `no-store` or a short max-age still spares the upstream a fetch per sign-in. */
export const MIN_LIFETIME_MS = MINUTE;
/** A token signed with a key the cached JWKS lacks refetches it, at most this often (an unknown `kid` is cheap to send). */
export const KEY_REFETCH_INTERVAL_MS = MINUTE;
const MAX_ENTRIES = 1000;

/** How long an answer may be kept: its Cache-Control max-age within [1 min, 24 h], else 5 min. */
export function lifetimeOf(cacheControl: string | null): number {
  const directives = (cacheControl ?? '').toLowerCase();
  if (/(?:^|[\s,])(?:no-store|no-cache)(?:$|[\s,=])/.test(directives)) return MIN_LIFETIME_MS;
  const maxAge = /(?:^|[\s,])max-age\s*=\s*"?(\d{1,10})"?/.exec(directives);
  if (!maxAge) return DEFAULT_LIFETIME_MS;
  return Math.min(MAX_LIFETIME_MS, Math.max(MIN_LIFETIME_MS, Number(maxAge[1]) * 1000));
}

// Asymmetric only: a JWKS is public, so a MAC "signed" with one of its keys proves nothing.
const SIGNATURE_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

interface Keys {
  verify: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
  expiresAt: number;
}

interface Entry {
  sequence: string;
  config?: Promise<oidc.Configuration>;
  configExpiresAt: number;
  keys?: Promise<Keys>;
  saml?: Promise<IdpMetadata>;
  samlExpiresAt: number;
}

const isDiscovery = (url: string | URL) => new URL(url).pathname.includes('/.well-known/');

async function fetchKeys(jwksUri: string, fetch: OutboundFetch, now: number): Promise<Keys> {
  try {
    const response = await fetch(jwksUri, { headers: { accept: 'application/jwk-set+json, application/json' }, redirect: 'manual' });
    if (response.status !== 200) throw new UpstreamError('invalid', `the JWKS endpoint answered ${response.status}`);
    const jwks = (await response.json().catch(() => undefined)) as JSONWebKeySet | undefined;
    if (!jwks || typeof jwks !== 'object' || !Array.isArray(jwks.keys)) throw new UpstreamError('invalid', 'the JWKS endpoint answered no key set');
    return { verify: createLocalJWKSet(jwks), fetchedAt: now, expiresAt: now + lifetimeOf(response.headers.get('cache-control')) };
  } catch (err) {
    throw upstreamError(err);
  }
}

export function upstreamCache(options: { now?: () => number } = {}): UpstreamCache {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  function entryOf(idp: CachedIdp): Entry {
    const found = entries.get(idp.id);
    if (found?.sequence === idp.sequence) return found;
    entries.delete(idp.id);
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    const entry: Entry = { sequence: idp.sequence, configExpiresAt: 0, samlExpiresAt: 0 };
    entries.set(idp.id, entry);
    return entry;
  }

  /** A failed fetch is not kept: the next sign-in tries again. */
  function forgetOnFailure<T>(promise: Promise<T>, forget: () => void): Promise<T> {
    promise.catch(forget);
    return promise;
  }

  async function configuration(idp: CachedIdp, upstream: HttpUpstream, secret: string, fetch: OutboundFetch): Promise<oidc.Configuration> {
    if (upstream.protocol !== 'oidc') return upstreamConfiguration(upstream, secret, fetch);
    const entry = entryOf(idp);
    if (!entry.config || now() >= entry.configExpiresAt) {
      let lifetime = DEFAULT_LIFETIME_MS;
      const recording: OutboundFetch = async (url, init) => {
        const response = await fetch(url, init);
        if (isDiscovery(url)) lifetime = lifetimeOf(response.headers.get('cache-control'));
        return response;
      };
      const started = now();
      entry.configExpiresAt = Number.POSITIVE_INFINITY;
      const pending = upstreamConfiguration(upstream, secret, recording).then((config) => {
        config[oidc.customFetch] = fetch as unknown as oidc.CustomFetch;
        entry.configExpiresAt = started + lifetime;
        return config;
      });
      // New endpoints may come with new keys.
      entry.keys = undefined;
      entry.config = forgetOnFailure(pending, () => {
        if (entry.config === pending) entry.config = undefined;
      });
    }
    return entry.config;
  }

  function keysOf(entry: Entry, jwksUri: string, fetch: OutboundFetch, stale?: Keys): Promise<Keys> {
    const pending = fetchKeys(jwksUri, fetch, now());
    entry.keys = forgetOnFailure(pending, () => {
      if (entry.keys === pending) entry.keys = stale && Promise.resolve(stale);
    });
    return entry.keys;
  }

  /** Keys newer than `held`: another sign-in's refetch when one is under way or done, else a new one. */
  function renewed(entry: Entry, held: Promise<Keys>, jwksUri: string, fetch: OutboundFetch, stale?: Keys): Promise<Keys> {
    return entry.keys && entry.keys !== held ? entry.keys : keysOf(entry, jwksUri, fetch, stale);
  }

  function signatureCheck(idp: CachedIdp, config: oidc.Configuration, fetch: OutboundFetch): SignatureCheck {
    const jwksUri = config.serverMetadata().jwks_uri;
    return async (idToken) => {
      if (!jwksUri) throw new UpstreamError('invalid', 'the provider names no jwks_uri');
      const entry = entryOf(idp);
      let held = entry.keys ?? keysOf(entry, jwksUri, fetch);
      let keys = await held;
      if (now() >= keys.expiresAt) {
        held = renewed(entry, held, jwksUri, fetch);
        keys = await held;
      }
      try {
        await compactVerify(idToken, keys.verify, { algorithms: SIGNATURE_ALGORITHMS });
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey) || now() - keys.fetchedAt < KEY_REFETCH_INTERVAL_MS) throw signatureError(err);
        const fresh = await renewed(entry, held, jwksUri, fetch, keys);
        await compactVerify(idToken, fresh.verify, { algorithms: SIGNATURE_ALGORITHMS }).catch((again: unknown) => {
          throw signatureError(again);
        });
      }
    };
  }

  async function samlMetadata(idp: CachedIdp, settings: Pick<SamlSettings, 'metadata'>, fetch: OutboundFetch): Promise<IdpMetadata> {
    if (!('url' in settings.metadata)) return givenMetadata(settings.metadata.base64);
    const entry = entryOf(idp);
    if (!entry.saml || now() >= entry.samlExpiresAt) {
      let lifetime = DEFAULT_LIFETIME_MS;
      const recording: OutboundFetch = async (url, init) => {
        const response = await fetch(url, init);
        lifetime = lifetimeOf(response.headers.get('cache-control'));
        return response;
      };
      const started = now();
      entry.samlExpiresAt = Number.POSITIVE_INFINITY;
      const pending = fetchIdpMetadata(settings.metadata.url, recording).then((metadata) => {
        entry.samlExpiresAt = started + lifetime;
        return metadata;
      });
      entry.saml = forgetOnFailure(pending, () => {
        if (entry.saml === pending) entry.saml = undefined;
      });
    }
    return entry.saml;
  }

  return { configuration, signatureCheck, samlMetadata };
}

function signatureError(err: unknown): UpstreamError {
  if (err instanceof errors.JWKSNoMatchingKey) return new UpstreamError('invalid', 'the ID token is signed with a key the issuer does not publish');
  if (err instanceof errors.JOSEError) return new UpstreamError('invalid', `the ID token signature does not hold (${err.code})`);
  return upstreamError(err);
}
