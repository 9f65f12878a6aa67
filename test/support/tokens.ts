import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as client from 'openid-client';
import { SignJWT, createRemoteJWKSet, type JWTPayload } from 'jose';
import { apiClient, readResponse, type ApiResponse } from './api.ts';
import { readAdminPat, sleep, testServer, type InProcessServer } from './server.ts';

// Helpers for the token endpoint, introspection and revocation tests: the
// scene is set through the management API with the first-start PAT, the
// OAuth requests are made by openid-client, assertions are signed by jose.

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const API_SCOPE = 'urn:service:iam:api';

/** A JSON call of the admin/management API with the admin PAT (unless `options.token`); never answered with a 500. */
export type Api = (method: string, path: string, body?: unknown, options?: { token?: string; orgId?: string }) => Promise<ApiResponse>;

/** Asserts a 200 and returns the body. */
export async function ok(answer: Promise<ApiResponse>, what: string): Promise<any> {
  const { status, body } = await answer;
  assert.equal(status, 200, `${what}: ${JSON.stringify(body)}`);
  return body;
}

// ---- key files

export interface KeyFile {
  type: 'serviceaccount' | 'application';
  keyId: string;
  key: string;
  userId?: string;
  appId?: string;
  clientId?: string;
}

export function decodeKeyFile(keyDetails: string): KeyFile {
  return JSON.parse(Buffer.from(keyDetails, 'base64').toString('utf8')) as KeyFile;
}

export function privateKeyOf(file: KeyFile): KeyObject {
  return createPrivateKey(file.key);
}

/** An RSA key nobody registered, to sign with "another key". */
export function strangerKey(): KeyObject {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}

/** openid-client's private_key_jwt with the key of a key file (RS256, kid = keyId). */
export function privateKeyJwt(file: KeyFile, key: KeyObject = privateKeyOf(file)): client.ClientAuth {
  const cryptoKey = key.toCryptoKey({ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
  return client.PrivateKeyJwt({ key: cryptoKey as unknown as client.CryptoKey, kid: file.keyId });
}

/** No client authentication at all: openid-client sends neither client_id nor a secret. */
export const noClientAuth: client.ClientAuth = () => {};

/** A prepared client assertion (to replay one, or send one signed by a stranger). */
export function fixedAssertion(assertion: string): client.ClientAuth {
  return (_as, _client, body) => {
    body.set('client_assertion_type', CLIENT_ASSERTION_TYPE);
    body.set('client_assertion', assertion);
  };
}

/** client_secret_basic and client_secret_post at once. */
export function basicAndPost(clientId: string, secret: string): client.ClientAuth {
  const basic = client.ClientSecretBasic(secret);
  return (as, metadata, body, headers) => {
    basic(as, metadata, body, headers);
    body.set('client_id', clientId);
    body.set('client_secret', secret);
  };
}

export interface SignOptions {
  key?: KeyObject;
  alg?: string;
  kid?: string | null;
  typ?: string;
}

/** Signs `claims` exactly as given (nothing added) with the key file's key, RS256, kid = keyId. */
export function signJwt(file: KeyFile, claims: JWTPayload, options: SignOptions = {}): Promise<string> {
  const kid = options.kid === null ? undefined : (options.kid ?? file.keyId);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'RS256', ...(kid ? { kid } : {}), ...(options.typ ? { typ: options.typ } : {}) })
    .sign(options.key ?? privateKeyOf(file));
}

export const now = (): number => Math.floor(Date.now() / 1000);

let jtiCounter = 0;
export function freshJti(): string {
  return `jti-${process.pid}-${Date.now()}-${++jtiCounter}`;
}

/** A JWT profile assertion of the machine user of `file`: iss = sub = userId, aud = issuer, iat, exp (+5 min), jti. */
export function jwtProfileAssertion(file: KeyFile, issuer: string, overrides: JWTPayload = {}, options: SignOptions = {}): Promise<string> {
  const t = now();
  return signJwt(file, { iss: file.userId, sub: file.userId, aud: issuer, iat: t, exp: t + 300, jti: freshJti(), ...overrides }, options);
}

/** A private_key_jwt client assertion of an app key file: iss = sub = clientId, aud = issuer. */
export function clientAssertion(file: KeyFile, issuer: string, overrides: JWTPayload = {}, options: SignOptions = {}): Promise<string> {
  const t = now();
  return signJwt(file, { iss: file.clientId, sub: file.clientId, aud: issuer, iat: t, exp: t + 60, jti: freshJti(), ...overrides }, options);
}

/** An unsecured JWT (`alg: none`). */
export function unsecuredJwt(claims: JWTPayload): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

// ---- openid-client

/** Clients of one issuer, sharing one discovery document. */
export interface Clients {
  issuer: string;
  metadata: client.ServerMetadata;
  config(clientId: string, auth: client.ClientAuth, metadata?: Partial<client.ClientMetadata>): client.Configuration;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

export async function discoverClients(issuer: string): Promise<Clients> {
  const discovered = await client.discovery(new URL(issuer), 'discovery', undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const metadata = discovered.serverMetadata();
  return {
    issuer,
    metadata,
    config(clientId, auth, clientMetadata) {
      const config = new client.Configuration(metadata, clientId, clientMetadata, auth);
      client.allowInsecureRequests(config);
      return config;
    },
    jwks: createRemoteJWKSet(new URL(metadata.jwks_uri!)),
  };
}

export interface OAuthFailure {
  status: number;
  error: string;
  description: string | undefined;
  wwwAuthenticate: string | null;
}

/** Awaits a request openid-client must refuse, and returns the OAuth error the server answered. */
export async function oauthFailure(promise: Promise<unknown>): Promise<OAuthFailure> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof client.ResponseBodyError) {
      return { status: err.status, error: err.error, description: err.error_description, wwwAuthenticate: err.response.headers.get('www-authenticate') };
    }
    if (err instanceof client.WWWAuthenticateChallengeError) {
      const response = err.response;
      const body = (await response.json().catch(() => ({}))) as { error?: string; error_description?: string };
      return { status: err.status, error: String(body.error), description: body.error_description, wwwAuthenticate: response.headers.get('www-authenticate') };
    }
    throw err;
  }
  assert.fail('the request succeeded, but an OAuth error was expected');
}

/** Asserts the OAuth error (and status) of a refused request; returns it for further checks. */
export async function refused(promise: Promise<unknown>, error: string, status: number, why = ''): Promise<OAuthFailure> {
  const failure = await oauthFailure(promise);
  const where = `${why ? `${why}: ` : ''}${failure.status} ${failure.error} (${failure.description ?? ''})`;
  assert.equal(failure.error, error, where);
  assert.equal(failure.status, status, where);
  return failure;
}

// ---- raw HTTP (only for requests a client library never sends)

/** A form POST as a client library would never send it; the answer as it came, 5xx included. */
export async function postForm(url: string, body: string | URLSearchParams, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return readResponse(
    await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: body.toString() }),
  );
}

// ---- the scene

export interface MachineUser {
  userId: string;
  userName: string;
}

export interface App {
  appId: string;
  clientId: string;
  clientSecret?: string;
  projectId: string;
}

export interface TokenWorld {
  server: InProcessServer;
  issuer: string;
  pat: string;
  /** The first-start org (of the admin machine user). */
  defaultOrgId: string;
  /** The first-start JSON key of the admin machine user (IAM_OWNER). */
  adminKey: KeyFile;
  api: Api;
  clients: Clients;
  createMachine(userName: string, accessTokenType?: 'BEARER' | 'JWT'): Promise<MachineUser>;
  machineSecret(userId: string): Promise<{ clientId: string; clientSecret: string }>;
  machineKey(userId: string, expirationDate?: string): Promise<KeyFile>;
  createProject(name: string): Promise<string>;
  createApp(projectId: string, settings: Record<string, unknown>): Promise<App>;
  appKey(app: App): Promise<KeyFile>;
  stop(): Promise<void>;
}

let appCounter = 0;

/** The server in this process (ISSUER http://127.0.0.1:PORT) with the management API at hand. */
export async function startTokenWorld(env: Record<string, string> = {}): Promise<TokenWorld> {
  const server = await testServer({ env });
  try {
    const pat = readAdminPat(server.dataDir);
    const adminKey = JSON.parse(readFileSync(join(server.dataDir, 'admin-key.json'), 'utf8')) as KeyFile;
    const call = apiClient(server.url, pat);
    const api: Api = (method, path, body, options = {}) => call(method, path, { body, ...options });
    const admin = await ok(api('GET', `/management/v1/users/${adminKey.userId}`), 'read the admin machine user');
    const defaultOrgId = String(admin.user.details.resourceOwner);
    const clients = await discoverClients(server.issuer);
    return {
      server,
      issuer: server.issuer,
      pat,
      defaultOrgId,
      adminKey,
      api,
      clients,
      async createMachine(userName, accessTokenType = 'BEARER') {
        const body = await ok(
          api('POST', '/management/v1/users/machine', {
            userName,
            name: userName,
            description: 'test',
            accessTokenType: `ACCESS_TOKEN_TYPE_${accessTokenType}`,
          }),
          `create machine user ${userName}`,
        );
        return { userId: body.userId, userName };
      },
      async machineSecret(userId) {
        const body = await ok(api('PUT', `/management/v1/users/${userId}/secret`, {}), 'machine secret');
        return { clientId: body.clientId, clientSecret: body.clientSecret };
      },
      async machineKey(userId, expirationDate) {
        const body = await ok(
          api('POST', `/management/v1/users/${userId}/keys`, { type: 'KEY_TYPE_JSON', ...(expirationDate ? { expirationDate } : {}) }),
          'machine key',
        );
        const file = decodeKeyFile(body.keyDetails);
        assert.equal(file.type, 'serviceaccount');
        assert.equal(file.userId, userId);
        return file;
      },
      async createProject(name) {
        return (await ok(api('POST', '/management/v1/projects', { name }), `create project ${name}`)).id;
      },
      async createApp(projectId, settings) {
        const body = await ok(api('POST', `/management/v1/projects/${projectId}/apps/oidc`, { name: `app ${++appCounter}`, ...settings }), 'create app');
        return { appId: body.appId, clientId: body.clientId, ...(body.clientSecret ? { clientSecret: body.clientSecret } : {}), projectId };
      },
      async appKey(app) {
        const body = await ok(api('POST', `/management/v1/projects/${app.projectId}/apps/${app.appId}/keys`, { type: 'KEY_TYPE_JSON' }), 'app key');
        const file = decodeKeyFile(body.keyDetails);
        assert.equal(file.type, 'application');
        assert.equal(file.clientId, app.clientId);
        return file;
      },
      stop: () => server.stop(),
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** Polls `check` until it returns true or `ms` have passed; returns the last result. */
export async function eventually(check: () => Promise<boolean>, ms = 5000, every = 200): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(every);
  }
}

export interface StoredGrant {
  id: string;
  inRedis: boolean;
  inPostgres: boolean;
  /** Seconds until the stored grant expires, as its store counts them. */
  ttl: number;
}

/** Where the grant of an opaque access token (still active) is stored, read from the stores themselves. */
export async function storedGrantOf(server: InProcessServer, accessToken: string): Promise<StoredGrant> {
  const { engine, db, redis } = server.running;
  const token = await engine.provider.AccessToken.find(accessToken);
  assert.ok(token?.grantId, 'an active opaque access token with a grant');
  const id = token.grantId;
  const redisTtl = redis ? await redis.ttl(`Grant:${id}`) : -2;
  const { rows } = await db.query<{ ttl: number }>(
    "SELECT extract(epoch FROM expires_at - now())::float8 AS ttl FROM engine_records WHERE model = 'Grant' AND id = $1",
    [id],
  );
  const inRedis = redisTtl !== -2;
  return { id, inRedis, inPostgres: rows.length === 1, ttl: inRedis ? redisTtl : (rows[0]?.ttl ?? 0) };
}
