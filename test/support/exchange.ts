import assert from 'node:assert/strict';
import { createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import * as client from 'openid-client';
import { SignJWT, importPKCS8 } from 'jose';
import { jwtProfileClientId } from '../../src/domain/machine-clients.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiClient, readResponse, type ApiResponse } from './api.ts';
import { readAdminPat, testServer, type InProcessServer } from './server.ts';
import { runCodeFlow, type CodeFlowUser, type TokenSet } from './code-flow.ts';

// A token exchange scene (RFC 8693, docs/oidc.md) on one in-process server,
// set up through the admin API only: apps that may exchange, human subjects,
// machine users with JSON keys whose JWT profile tokens serve as subject and
// actor tokens, and impersonator roles. Every request goes through
// openid-client; a fetch under it records each answer as it was on the wire
// and fails the test on any 5xx.

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export const TYPE = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  refreshToken: 'urn:ietf:params:oauth:token-type:refresh_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  userId: 'urn:service:params:oauth:token-type:user_id',
} as const;

/** One HTTP answer as the server sent it. */
export type Answer = ApiResponse;

/** Bad input is answered with an OAuth error (RFC 6749 5.2), never a 5xx. */
function assertNoServerError(answer: Answer, what: string): void {
  assert.ok(answer.status < 500, `${what} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
}

/** A fetch for openid-client that keeps every answer it saw, 5xx included. */
function keepingFetch(answers: Answer[]): client.CustomFetch {
  return async (url, options) => {
    const response = await fetch(url, options as RequestInit);
    answers.push(await readResponse(response.clone()));
    return response;
  };
}

/** The same, failing the test on a 5xx. */
function recordingFetch(answers: Answer[]): client.CustomFetch {
  const keep = keepingFetch(answers);
  return async (url, options) => {
    const response = await keep(url, options);
    assertNoServerError(answers.at(-1)!, `${options.method} ${url}`);
    return response;
  };
}

const REDIRECT_URI = 'https://rp.example.com/cb';

/** JWT profile requests take no client authentication: the assertion authenticates the machine user. */
const noClientAuthentication: client.ClientAuth = () => {};

export interface App {
  appId: string;
  projectId: string;
  clientId: string;
  clientSecret?: string;
  auth: client.ClientAuth;
  /** PRIVATE_KEY_JWT apps: the key of the app's key file, to sign `jwt` subject tokens with. */
  signingKey?: { keyId: string; privateKey: KeyObject };
}

export interface Machine {
  userId: string;
  keyId: string;
  privateKey: KeyObject;
}

export interface MachineTokens {
  access_token: string;
  id_token: string;
  scope: string;
}

/** The outcome of a token endpoint request: the answer on the wire, and what openid-client made of it. */
export interface Outcome {
  answer: Answer;
  tokens?: client.TokenEndpointResponse;
  error?: unknown;
}

export interface AppSettings {
  authMethodType?: string;
  accessTokenType?: string;
  grantTypes?: string[];
  iamApiAccess?: boolean;
  /** The org of the project (`x-service-orgid`); default: the admin's. */
  orgId?: string;
}

/** A human who can sign in at the login pages. */
export interface SignInUser extends CodeFlowUser {
  userId: string;
}

export interface ExchangeWorld {
  server: InProcessServer;
  issuer: string;
  metadata: client.ServerMetadata;
  defaultOrgId: string;
  /** An admin API call with the first-start admin's PAT; asserts a 200 and returns the body. */
  admin(method: string, path: string, body?: unknown, orgId?: string): Promise<any>;
  setTokenExchange(enabled: boolean): Promise<void>;
  createProject(name: string, orgId?: string): Promise<string>;
  createApp(projectId: string, name: string, settings?: AppSettings): Promise<App>;
  createHuman(userName: string, orgId?: string): Promise<string>;
  /** A human with a password, in `orgId` (default: the admin's org). */
  createSignInUser(userName: string, orgId?: string): Promise<SignInUser>;
  /** The first-start instance admin (IAM_OWNER), who signs in with the generated password. */
  instanceAdmin(): Promise<SignInUser>;
  /**
   * An access token of `userId` issued to `app`, minted by the engine's own
   * models as the end of a code flow would (a saved grant, then the token):
   * what a machine user, who cannot sign in at the login pages, would hold
   * had it signed in at `app`.
   */
  tokenIssuedTo(app: App, userId: string, scope: string): Promise<string>;
  /** A complete browser-less authorization code flow of `user` at `app` (a secret-based app), with `scope`. */
  codeFlow(app: App, user: CodeFlowUser, scope: string): Promise<TokenSet>;
  /** A machine user with a JSON key, in `orgId` (default: the admin's org). */
  createMachine(userName: string, accessTokenType?: 'ACCESS_TOKEN_TYPE_BEARER' | 'ACCESS_TOKEN_TYPE_JWT', orgId?: string): Promise<Machine>;
  /** The JWT profile grant of a machine user: its own access token and ID token. */
  machineTokens(machine: Machine, scope?: string): Promise<MachineTokens>;
  /** An openid-client configuration of `app` whose requests are recorded in `answers`. */
  configOf(app: Pick<App, 'clientId' | 'auth'>, answers?: Answer[]): client.Configuration;
  /** A token exchange request by `app`; `params` values that are arrays are sent repeated. */
  exchange(app: App, params: Record<string, string | string[]>, options?: { allowServerError?: boolean }): Promise<Outcome>;
  introspect(app: App, token: string): Promise<client.IntrospectionResponse>;
  revoke(app: App, token: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startExchangeWorld(): Promise<ExchangeWorld> {
  const server = await testServer();
  try {
    return await buildWorld(server);
  } catch (err) {
    await server.stop();
    throw err;
  }
}

async function buildWorld(server: InProcessServer): Promise<ExchangeWorld> {
  const issuer = server.issuer;
  const api = apiClient(server.url, readAdminPat(server.dataDir));

  const admin = async (method: string, path: string, body?: unknown, orgId?: string): Promise<any> => {
    const answer = await api(method, path, { body, ...(orgId ? { orgId } : {}) });
    assert.equal(answer.status, 200, `${method} ${path}: ${answer.text}`);
    return answer.body;
  };

  const discovered = await client.discovery(new URL(issuer), 'discovery', undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const metadata = discovered.serverMetadata();

  const configOf = (app: App | { clientId: string; auth: client.ClientAuth }, answers: Answer[] = []): client.Configuration => {
    const config = new client.Configuration(metadata, app.clientId, undefined, app.auth);
    client.allowInsecureRequests(config);
    config[client.customFetch] = recordingFetch(answers);
    return config;
  };

  const { rows } = await server.running.db.query<{ default_org_id: string }>('SELECT default_org_id FROM instance');
  const defaultOrgId = rows[0]!.default_org_id;

  const world: ExchangeWorld = {
    server,
    issuer,
    metadata,
    defaultOrgId,
    admin,
    async setTokenExchange(enabled) {
      await admin('PUT', '/v2/features/instance', { oidcTokenExchange: enabled });
    },
    async createProject(name, orgId) {
      return (await admin('POST', '/management/v1/projects', { name }, orgId)).id;
    },
    async createApp(projectId, name, settings = {}) {
      const authMethodType = settings.authMethodType ?? 'OIDC_AUTH_METHOD_TYPE_BASIC';
      const created = await admin(
        'POST',
        `/management/v1/projects/${projectId}/apps/oidc`,
        {
          name,
          redirectUris: [REDIRECT_URI],
          responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
          grantTypes: settings.grantTypes ?? ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'],
          appType: 'OIDC_APP_TYPE_WEB',
          authMethodType,
          ...(settings.accessTokenType ? { accessTokenType: settings.accessTokenType } : {}),
          ...(settings.iamApiAccess !== undefined ? { iamApiAccess: settings.iamApiAccess } : {}),
        },
        settings.orgId,
      );
      const app: App = { appId: created.appId, projectId, clientId: created.clientId, auth: client.None() };
      if (authMethodType === 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT') {
        const key = await admin('POST', `/management/v1/projects/${projectId}/apps/${created.appId}/keys`, { type: 'KEY_TYPE_JSON' });
        const file = JSON.parse(Buffer.from(key.keyDetails, 'base64').toString('utf8')) as { keyId: string; key: string; clientId: string };
        assert.equal(file.clientId, created.clientId);
        const pkcs8 = createPrivateKey(file.key).export({ type: 'pkcs8', format: 'pem' }) as string;
        const privateKey = await importPKCS8(pkcs8, 'RS256', { extractable: false });
        app.auth = client.PrivateKeyJwt({ key: privateKey, kid: file.keyId });
        app.signingKey = { keyId: file.keyId, privateKey: createPrivateKey(file.key) };
      } else {
        assert.ok(created.clientSecret, `${name} comes with a client secret`);
        app.clientSecret = created.clientSecret;
        app.auth = client.ClientSecretBasic(created.clientSecret);
      }
      return app;
    },
    async createHuman(userName, orgId) {
      const body = { userName, profile: { firstName: 'Test', lastName: userName }, email: { email: `${userName}@example.com`, isEmailVerified: true } };
      return (await admin('POST', '/management/v1/users/human', body, orgId)).userId;
    },
    async createSignInUser(userName, orgId) {
      const password = `Pw-${userName}-${randomUUID().slice(0, 8)}`;
      const body = {
        userName,
        profile: { firstName: 'Test', lastName: userName },
        email: { email: `${userName}@example.com`, isEmailVerified: true },
        password,
      };
      const { userId } = await admin('POST', '/management/v1/users/human', body, orgId);
      return { userId, loginName: userName, password };
    },
    async instanceAdmin() {
      const { rows } = await server.running.db.query<{ id: string }>(
        "SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.type = 'human' AND m.scope = 'instance'",
      );
      const password = readFileSync(join(server.dataDir, 'admin.password'), 'utf8').trim();
      return { userId: rows[0]!.id, loginName: 'admin', password };
    },
    async tokenIssuedTo(app, userId, scope) {
      const provider = server.running.engine.provider;
      const appClient = await provider.Client.find(app.clientId);
      assert.ok(appClient, `client ${app.clientId}`);
      const grant = new provider.Grant({ accountId: userId, clientId: app.clientId });
      grant.addOIDCScope(scope);
      const grantId = await grant.save();
      return new provider.AccessToken({ accountId: userId, client: appClient, grantId, gty: 'authorization_code', scope } as never).save();
    },
    async codeFlow(app, user, scope) {
      assert.ok(app.clientSecret, 'a code flow of a secret-based app');
      return runCodeFlow({ baseUrl: server.url, clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: REDIRECT_URI, scope }, user);
    },
    async createMachine(userName, accessTokenType = 'ACCESS_TOKEN_TYPE_BEARER', orgId) {
      const { userId } = await admin(
        'POST',
        '/management/v1/users/machine',
        { userName, name: userName, description: 'token exchange tests', accessTokenType },
        orgId,
      );
      const key = await admin('POST', `/management/v1/users/${userId}/keys`, { type: 'KEY_TYPE_JSON' }, orgId);
      const file = JSON.parse(Buffer.from(key.keyDetails, 'base64').toString('utf8')) as { keyId: string; key: string; userId: string };
      assert.equal(file.userId, userId);
      return { userId, keyId: file.keyId, privateKey: createPrivateKey(file.key) };
    },
    async machineTokens(machine, scope = 'openid profile offline_access') {
      const assertion = await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: machine.keyId })
        .setIssuer(machine.userId)
        .setSubject(machine.userId)
        .setAudience(issuer)
        .setIssuedAt()
        .setExpirationTime('5m')
        .setJti(randomUUID())
        .sign(machine.privateKey);
      const config = configOf({ clientId: jwtProfileClientId(machine.userId), auth: noClientAuthentication });
      const tokens = await client.genericGrantRequest(config, JWT_BEARER, { assertion, scope });
      assert.ok(tokens.id_token, 'the JWT profile grant answers an ID token of the machine user');
      return { access_token: tokens.access_token, id_token: tokens.id_token, scope: tokens.scope ?? '' };
    },
    configOf,
    async exchange(app, params, options = {}) {
      const body = new URLSearchParams();
      for (const [name, value] of Object.entries(params)) for (const one of Array.isArray(value) ? value : [value]) body.append(name, one);
      const answers: Answer[] = [];
      let tokens: client.TokenEndpointResponse | undefined;
      let error: unknown;
      try {
        const config = configOf(app, answers);
        // To list every 5xx of a batch in one failure message, the caller asserts instead.
        if (options.allowServerError) config[client.customFetch] = keepingFetch(answers);
        tokens = await client.genericGrantRequest(config, TOKEN_EXCHANGE, body);
      } catch (err) {
        error = err;
      }
      const answer = answers.at(-1);
      assert.ok(answer, `no answer from the token endpoint: ${String(error)}`);
      if (!options.allowServerError) assertNoServerError(answer, `token exchange with ${JSON.stringify(params).slice(0, 300)}`);
      return { answer, ...(tokens ? { tokens } : {}), ...(error ? { error } : {}) };
    },
    async introspect(app, token) {
      return client.tokenIntrospection(configOf(app), token);
    },
    async revoke(app, token) {
      await client.tokenRevocation(configOf(app), token);
    },
    stop: () => server.stop(),
  };
  return world;
}

/** Asserts a successful exchange that openid-client accepted too; returns the body as sent. */
export function expectTokens(outcome: Outcome): Record<string, any> {
  assert.equal(outcome.answer.status, 200, `expected tokens, got ${outcome.answer.status}: ${outcome.answer.text}`);
  assert.equal(outcome.error, undefined, `openid-client refused the answer: ${String(outcome.error)}`);
  return outcome.answer.body;
}

/** Asserts an RFC 6749 5.2 error answer: status, error code and, when given, the description. */
export function expectError(outcome: Outcome, status: number, error: string, description?: RegExp): void {
  const { answer } = outcome;
  assert.equal(answer.status, status, `expected ${status} ${error}, got ${answer.status}: ${answer.text}`);
  assert.equal(answer.body?.error, error, `expected ${error}, got ${answer.text}`);
  if (description) assert.match(String(answer.body?.error_description), description);
}
