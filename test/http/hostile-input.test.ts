import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { JWT_BEARER, TOKEN_EXCHANGE, jwtProfileAssertion, ok, startTokenWorld, unsecuredJwt, type TokenWorld } from '../support/tokens.ts';
import { basicHeader, request } from '../support/api.ts';
import { sendRaw, type RawRequest } from '../support/raw-http.ts';

// Hostile input (RFC 9110 status classes): thousands of generated requests
// over every endpoint — OAuth/OIDC, the login UI forms with a live
// interaction, the admin and management API with a valid PAT — mixing valid
// requests with broken ones: paths in other letter cases, with NUL or
// invalid percent-escapes, overlong values, duplicate and array-valued
// parameters, wrong content types, invalid UTF-8, deeply nested JSON, bodies
// over the limit. None may be answered with a 5xx (only an unknown method
// may get 501), none may hang, and the server must still serve afterwards.
//
// The run is seeded: FUZZ_SEED=<n> replays a failing run, whose seed
// fast-check prints in the failure message.

const BATCHES = Number(process.env.FUZZ_BATCHES ?? 500);
const BATCH_SIZE = 20;
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RFC9110_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];

interface Scene {
  world: TokenWorld;
  port: number;
  clientId: string;
  clientSecret: string;
  machineId: string;
  victimId: string;
  humanId: string;
  projectId: string;
  appId: string;
  appClientId: string;
  appSecret: string;
  assertion: string;
  uid: string;
  cookies: string;
  csrf: string;
  accessToken: string;
}

let scene: Scene;

before(async () => {
  const world = await startTokenWorld({ AUTH_FAILURE_LIMIT: '0' });
  try {
    const machine = await world.createMachine('fuzz-robot');
    const secret = await world.machineSecret(machine.userId);
    const key = await world.machineKey(machine.userId);
    const victim = await world.createMachine('fuzz-victim');
    const human = await ok(
      world.api('POST', '/management/v1/users/human', {
        userName: 'fuzzy',
        profile: { firstName: 'Fu', lastName: 'Zzy' },
        email: { email: 'fuzzy@example.test' },
        password: 'Fuzzy-Passw0rd',
      }),
      'human',
    );
    const projectId = await world.createProject('fuzz');
    const app = await world.createApp(projectId, {
      redirectUris: ['http://localhost:1/cb'],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      devMode: true,
    });
    const token = await request(`${world.server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(secret.clientId, secret.clientSecret) },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'openid urn:service:iam:api' }),
    });
    assert.equal(token.status, 200, token.text);
    const authorize = await request(
      `${world.server.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: 'http://localhost:1/cb', response_type: 'code', scope: 'openid profile', state: 's', nonce: 'n' })}`,
    );
    assert.equal(authorize.status, 303, authorize.text);
    const uid = /\/ui\/login\/([^/?]+)/.exec(authorize.headers.get('location') ?? '')![1]!;
    const cookies = authorize.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const page = await request(`${world.server.url}/ui/login/${uid}`, { headers: { cookie: cookies } });
    assert.equal(page.status, 200, page.text);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    scene = {
      world,
      port: Number(new URL(world.server.url).port),
      clientId: secret.clientId,
      clientSecret: secret.clientSecret,
      machineId: machine.userId,
      victimId: victim.userId,
      humanId: human.userId,
      projectId,
      appId: app.appId,
      appClientId: app.clientId,
      appSecret: app.clientSecret!,
      assertion: await jwtProfileAssertion(key, world.issuer),
      uid,
      cookies,
      csrf,
      accessToken: token.body.access_token,
    };
  } catch (err) {
    await world.stop();
    throw err;
  }
});

after(async () => {
  await scene?.world.stop();
});

// ---- hostile values

/** Strings a hostile client sends: arbitrary Unicode, lone surrogates, NUL, escapes, overlong and lookalike values. */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      '\u0000',
      'a\u0000b',
      '%00',
      '%',
      '%zz',
      '%C3%28',
      '%ED%A0%80',
      '\uD800',
      '\uDFFF',
      ' ',
      '../..',
      '[]',
      '{}',
      '__proto__',
      'constructor',
      'null',
      '-1',
      '1e309',
      '9'.repeat(400),
      'x'.repeat(5000),
      'é'.repeat(3000),
      '<script>alert(1)</script>',
      "' OR 1=1 --",
      'GENDER_FEMALE',
      'admin@example.test',
    ),
  },
);

/** Any JSON value, arbitrary in shape, including prototype-polluting keys. */
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  hostileText,
  fc.integer(),
  fc.double(),
  fc.constantFrom(null, true, false, [], {}, { __proto__: { admin: true } }, Number.MAX_SAFE_INTEGER, -1),
  fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'a'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);

/** Percent-encodes the UTF-8 bytes of `text` (a lone surrogate becomes U+FFFD, as a browser sends it). */
function pct(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

function nested(depth: number, open: string, close: string, leaf = '1'): string {
  return `${open.repeat(depth)}${leaf}${close.repeat(depth)}`;
}

// ---- valid shapes that the mutations start from

function jsonTemplates(s: Scene): Record<string, unknown> {
  const human = {
    userName: 'new-user',
    profile: { firstName: 'New', lastName: 'User', gender: 'GENDER_MALE', preferredLanguage: 'de' },
    email: { email: 'new@example.test', isEmailVerified: true },
    phone: { phone: '+41791234567' },
    password: 'Passw0rd-long',
  };
  return {
    setup: { org: { name: 'Org', domain: '' }, human, roles: ['ORG_OWNER'] },
    human,
    machine: { userName: 'bot', name: 'Bot', description: 'd', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' },
    key: { type: 'KEY_TYPE_JSON', expirationDate: '2999-01-01T00:00:00Z' },
    pat: { expirationDate: '2999-01-01T00:00:00Z' },
    project: { name: 'P' },
    role: { roleKey: 'reader', displayName: 'Reader' },
    app: {
      name: 'A',
      redirectUris: ['https://rp.example/cb'],
      postLogoutRedirectUris: [],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      accessTokenType: 'OIDC_TOKEN_TYPE_BEARER',
      devMode: false,
    },
    grant: { projectId: s.projectId, roleKeys: ['reader'] },
    member: { userId: s.humanId, roles: ['ORG_USER_MANAGER'] },
    features: { oidcTokenExchange: true },
    lockout: { maxPasswordAttempts: 50, maxOtpAttempts: 50, lockoutDurationSeconds: 60 },
    empty: {},
    orgName: { name: 'O' },
    memberRoles: { roles: ['ORG_USER_MANAGER'] },
    roleChange: { displayName: 'R' },
    memberSearch: { query: { offset: 0, limit: 2, asc: true }, queries: [{ userNameQuery: { userName: 'a', method: 'TEXT_QUERY_METHOD_CONTAINS' } }] },
    passwordComplexity: { minLength: 8, hasUppercase: false, hasLowercase: false, hasNumber: true, hasSymbol: false },
    passwordReset: { returnCode: true },
    email: { email: 'changed@example.test', isEmailVerified: false },
    phone: { phone: '+41791234567', isPhoneVerified: false },
    metadata: { value: 'dmFsdWU=' },
    messageText: {
      title: 'T',
      preHeader: 'P',
      subject: 'S {{.OrgName}}',
      greeting: 'Hi {{.FirstName}}',
      text: 'Code {{.Code}}',
      buttonText: 'Go',
      footerText: 'F',
    },
    smsRelay: { endpoint: 'https://sms.example.test/send' },
    oauthIdp: {
      name: 'Hub',
      clientId: 'c',
      clientSecret: 's',
      authorizationEndpoint: 'https://hub.example.test/authorize',
      tokenEndpoint: 'https://hub.example.test/token',
      userEndpoint: 'https://hub.example.test/user',
      scopes: ['read:user'],
      idAttribute: 'id',
      providerOptions: { isLinkingAllowed: true, isCreationAllowed: true, isAutoCreation: false, isAutoUpdate: false },
    },
    // An org's directory on a documentation address: refused by the address rule before any connection.
    ldapIdp: {
      name: 'Directory',
      servers: ['ldaps://192.0.2.1'],
      startTls: false,
      baseDn: 'dc=example,dc=test',
      bindDn: 'cn=admin,dc=example,dc=test',
      bindPassword: 'p',
      userBase: 'ou=people',
      userObjectClasses: ['inetOrgPerson'],
      userFilters: ['uid'],
      timeout: '5s',
      attributes: { idAttribute: 'uid', emailAttribute: 'mail' },
    },
    policyIdp: { idpId: '123' },
    target: { name: 'T', endpoint: 'https://hook.example.test/in', timeout: '5s', restWebhook: { interruptOnError: false } },
    execution: { condition: { event: { event: 'user.human.added' } }, targets: [{ target: '123' }] },
    samlApp: {
      name: 'S',
      metadataXml: Buffer.from('<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.example.test"/>').toString('base64'),
    },
  };
}

interface Route {
  methods: string[];
  path: string;
  body?: keyof ReturnType<typeof jsonTemplates>;
}

/** Every admin and management call, with ids of things that exist (never the caller's own user). */
function apiRoutes(s: Scene): Route[] {
  const u = s.victimId;
  const p = s.projectId;
  return [
    { methods: ['POST'], path: '/admin/v1/orgs/_setup', body: 'setup' },
    { methods: ['POST'], path: '/admin/v1/members', body: 'member' },
    { methods: ['GET'], path: '/admin/v1/signing_keys' },
    { methods: ['GET', 'PUT'], path: '/v2/features/instance', body: 'features' },
    { methods: ['POST'], path: '/management/v1/users/human', body: 'human' },
    { methods: ['POST'], path: '/management/v1/users/machine', body: 'machine' },
    { methods: ['GET', 'DELETE'], path: `/management/v1/users/${u}` },
    { methods: ['GET'], path: `/management/v1/users/${s.humanId}` },
    { methods: ['GET', 'POST'], path: `/management/v1/users/${u}/keys`, body: 'key' },
    { methods: ['DELETE'], path: `/management/v1/users/${u}/keys/123` },
    { methods: ['PUT', 'DELETE'], path: `/management/v1/users/${u}/secret`, body: 'empty' },
    { methods: ['GET', 'POST'], path: `/management/v1/users/${u}/pats`, body: 'pat' },
    { methods: ['DELETE'], path: `/management/v1/users/${u}/pats/123` },
    { methods: ['GET', 'POST'], path: `/management/v1/users/${s.humanId}/grants`, body: 'grant' },
    { methods: ['POST'], path: '/management/v1/projects', body: 'project' },
    { methods: ['GET'], path: `/management/v1/projects/${p}` },
    { methods: ['POST'], path: `/management/v1/projects/${p}/roles`, body: 'role' },
    { methods: ['POST'], path: `/management/v1/projects/${p}/apps/oidc`, body: 'app' },
    { methods: ['GET', 'PUT'], path: `/management/v1/projects/${p}/apps/${s.appId}`, body: 'app' },
    { methods: ['POST'], path: `/management/v1/projects/${p}/apps/${s.appId}/keys`, body: 'key' },
    { methods: ['POST'], path: '/management/v1/orgs/me/members', body: 'member' },
    { methods: ['PUT'], path: `/management/v1/projects/${p}`, body: 'project' },
    { methods: ['DELETE'], path: '/management/v1/projects/123' },
    { methods: ['POST'], path: `/management/v1/projects/${p}/roles/_search`, body: 'empty' },
    { methods: ['PUT'], path: `/management/v1/projects/${p}/roles/reader`, body: 'roleChange' },
    { methods: ['DELETE'], path: `/management/v1/projects/${p}/roles/nobody` },
    { methods: ['POST'], path: `/management/v1/projects/${p}/apps/123/_regenerate_secret`, body: 'empty' },
    { methods: ['POST'], path: '/management/v1/orgs/me/members/_search', body: 'memberSearch' },
    { methods: ['PUT', 'DELETE'], path: `/management/v1/orgs/me/members/${u}`, body: 'memberRoles' },
    { methods: ['POST'], path: '/admin/v1/members/_search', body: 'memberSearch' },
    { methods: ['PUT', 'DELETE'], path: '/admin/v1/members/123', body: 'memberRoles' },
    { methods: ['POST'], path: '/management/v1/orgs', body: 'orgName' },
    { methods: ['PUT'], path: '/management/v1/orgs/me', body: 'orgName' },
    { methods: ['GET', 'PUT'], path: '/admin/v1/policies/lockout', body: 'lockout' },
    { methods: ['GET', 'PUT', 'DELETE'], path: '/management/v1/policies/lockout', body: 'lockout' },
    { methods: ['GET', 'PUT'], path: '/admin/v1/policies/password_complexity', body: 'passwordComplexity' },
    { methods: ['GET', 'PUT', 'DELETE'], path: '/management/v1/policies/password_complexity', body: 'passwordComplexity' },
    { methods: ['POST'], path: `/management/v1/users/${u}/password/_reset`, body: 'passwordReset' },
    { methods: ['POST'], path: `/management/v1/users/${u}/_resend_initialization`, body: 'empty' },
    { methods: ['POST'], path: `/management/v1/users/${u}/email/_resend_verification`, body: 'empty' },
    { methods: ['PUT'], path: `/management/v1/users/${u}/email`, body: 'email' },
    { methods: ['PUT'], path: `/management/v1/users/${u}/phone`, body: 'phone' },
    { methods: ['POST'], path: `/management/v1/users/${u}/phone/_resend_verification`, body: 'empty' },
    { methods: ['DELETE'], path: `/management/v1/users/${u}/auth_factors/otp_email` },
    { methods: ['DELETE'], path: `/management/v1/users/${u}/auth_factors/otp_sms` },
    { methods: ['POST', 'GET', 'DELETE'], path: `/management/v1/users/${u}/metadata/department`, body: 'metadata' },
    { methods: ['POST'], path: `/management/v1/users/${u}/metadata/_search`, body: 'empty' },
    { methods: ['POST'], path: `/management/v1/users/${u}/links/_search`, body: 'empty' },
    { methods: ['DELETE'], path: `/management/v1/users/${u}/links/123/someone` },
    { methods: ['GET', 'PUT', 'DELETE'], path: '/management/v1/text/message/PasswordReset/de', body: 'messageText' },
    { methods: ['GET', 'PUT', 'DELETE'], path: '/admin/v1/sms/http', body: 'smsRelay' },
    { methods: ['POST'], path: '/management/v1/idps/oauth', body: 'oauthIdp' },
    { methods: ['PUT'], path: '/management/v1/idps/oauth/123', body: 'oauthIdp' },
    { methods: ['POST'], path: '/management/v1/idps/ldap', body: 'ldapIdp' },
    { methods: ['PUT'], path: '/management/v1/idps/ldap/123', body: 'ldapIdp' },
    { methods: ['POST'], path: '/management/v1/idps/_search', body: 'empty' },
    { methods: ['GET', 'DELETE'], path: '/admin/v1/idps/123' },
    { methods: ['POST'], path: '/management/v1/policies/login/idps', body: 'policyIdp' },
    { methods: ['POST'], path: '/admin/v1/policies/login/idps/_search', body: 'empty' },
    { methods: ['DELETE'], path: '/management/v1/policies/login/idps/123' },
    { methods: ['POST'], path: '/v2beta/actions/targets', body: 'target' },
    { methods: ['POST'], path: '/v2beta/actions/targets/_search', body: 'empty' },
    { methods: ['GET', 'PUT', 'DELETE'], path: '/v2beta/actions/targets/123', body: 'target' },
    { methods: ['GET'], path: '/v2beta/actions/targets/123/state' },
    { methods: ['PUT'], path: '/v2beta/actions/executions', body: 'execution' },
    { methods: ['POST'], path: '/v2beta/actions/executions/_search', body: 'empty' },
    { methods: ['POST'], path: `/management/v1/projects/${p}/apps/saml`, body: 'samlApp' },
    { methods: ['POST'], path: '/management/v1/orgs/me/_reactivate', body: 'empty' },
  ];
}

/** A JSON body: the template, the template with one field replaced, removed or added, or something else entirely. */
function jsonBodyArb(template: unknown): fc.Arbitrary<Buffer> {
  const mutated = fc.tuple(fc.nat(), hostileJson, fc.constantFrom('replace', 'remove', 'add', 'wrap')).map(([pick, value, how]) => {
    const copy = structuredClone(template) as Record<string, unknown>;
    const paths: Array<[Record<string, unknown>, string]> = [];
    const walk = (o: Record<string, unknown>) => {
      for (const k of Object.keys(o)) {
        paths.push([o, k]);
        const v = o[k];
        if (v && typeof v === 'object') walk(v as Record<string, unknown>);
      }
    };
    if (copy && typeof copy === 'object') walk(copy);
    const [holder, key] = paths.length ? paths[pick % paths.length]! : [copy, 'x'];
    if (how === 'replace') holder[key] = value;
    else if (how === 'remove') delete holder[key];
    else if (how === 'add') holder[`extra${pick % 3}`] = value;
    else holder[key] = [holder[key], value];
    return Buffer.from(JSON.stringify(copy) ?? 'null');
  });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(Buffer.from(JSON.stringify(template))) },
    { weight: 8, arbitrary: mutated },
    { weight: 2, arbitrary: hostileJson.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 100_000 }).map((d) => Buffer.from(nested(d, '[', ']'))) },
    { weight: 1, arbitrary: fc.integer({ min: 20, max: 50_000 }).map((d) => Buffer.from(nested(d, '{"a":', '}'))) },
    // Duplicate keys, trailing garbage, truncation, invalid UTF-8 bytes.
    { weight: 1, arbitrary: fc.constant(Buffer.from('{"org":{"name":"a"},"org":{"name":"b"}}')) },
    { weight: 1, arbitrary: fc.string().map((t) => Buffer.from(`${JSON.stringify(template)}${t}`)) },
    { weight: 1, arbitrary: fc.nat().map((n) => Buffer.from(JSON.stringify(template)).subarray(0, n % 40)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')])) },
    { weight: 1, arbitrary: fc.constant(Buffer.from('{"name":"\xff\xfe\xc3\x28"}', 'latin1')) },
  );
}

// ---- forms

type Form = Array<[string, string]>;

function tokenForms(s: Scene): fc.Arbitrary<Form> {
  return fc.constantFrom<Form>(
    [
      ['grant_type', 'client_credentials'],
      ['scope', 'openid urn:service:iam:api'],
    ],
    [
      ['grant_type', 'client_credentials'],
      ['scope', 'openid'],
      ['client_id', s.clientId],
      ['client_secret', s.clientSecret],
    ],
    [
      ['grant_type', JWT_BEARER],
      ['assertion', s.assertion],
      ['scope', 'openid'],
    ],
    [
      ['grant_type', JWT_BEARER],
      ['assertion', unsecuredJwt({ iss: s.machineId, sub: s.machineId, aud: s.world.issuer })],
    ],
    [
      ['grant_type', JWT_BEARER],
      ['assertion', 'a.b.c'],
    ],
    [
      ['grant_type', 'authorization_code'],
      ['code', 'abc'],
      ['redirect_uri', 'http://localhost:1/cb'],
      ['code_verifier', 'x'.repeat(43)],
    ],
    [
      ['grant_type', 'refresh_token'],
      ['refresh_token', 'abc'],
    ],
    [
      ['grant_type', TOKEN_EXCHANGE],
      ['subject_token', s.accessToken],
      ['subject_token_type', 'urn:ietf:params:oauth:token-type:access_token'],
      ['scope', 'openid'],
    ],
    [
      ['grant_type', 'password'],
      ['username', 'a'],
      ['password', 'b'],
    ],
    [
      ['grant_type', 'urn:ietf:params:oauth:grant-type:device_code'],
      ['device_code', 'x'],
    ],
    [
      ['client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'],
      ['client_assertion', 'a.b.c'],
      ['grant_type', 'client_credentials'],
    ],
  );
}

function tokenQueryForms(s: Scene): fc.Arbitrary<Form> {
  return fc.constantFrom<Form>(
    [['token', s.accessToken]],
    [
      ['token', s.accessToken],
      ['token_type_hint', 'refresh_token'],
    ],
    [['token', 'a.b.c']],
    [['token', s.assertion]],
    [
      ['client_id', s.clientId],
      ['client_secret', s.clientSecret],
      ['token', 'x'],
    ],
  );
}

function authorizeForms(s: Scene): fc.Arbitrary<Form> {
  return fc.constantFrom<Form>(
    [
      ['client_id', s.appClientId],
      ['redirect_uri', 'http://localhost:1/cb'],
      ['response_type', 'code'],
      ['scope', 'openid'],
      ['state', 's'],
    ],
    [
      ['client_id', s.appClientId],
      ['redirect_uri', 'http://localhost:1/cb'],
      ['response_type', 'code'],
      ['scope', 'openid'],
      ['prompt', 'none'],
    ],
    [
      ['client_id', s.appClientId],
      ['redirect_uri', 'http://localhost:1/cb'],
      ['response_type', 'id_token token'],
      ['scope', 'openid'],
      ['nonce', 'n'],
    ],
    [
      ['client_id', s.appClientId],
      ['redirect_uri', 'https://evil.example/cb'],
      ['response_type', 'code'],
      ['scope', 'openid'],
    ],
    [
      ['client_id', s.appClientId],
      ['redirect_uri', 'http://localhost:1/cb'],
      ['response_type', 'code'],
      ['scope', 'openid'],
      ['code_challenge', 'x'.repeat(43)],
      ['code_challenge_method', 'plain'],
      ['max_age', '-1'],
      ['ui_locales', 'de'],
      ['login_hint', 'fuzzy'],
      ['id_token_hint', 'a.b.c'],
      ['request', 'a.b.c'],
      ['claims', '{"userinfo":{}}'],
    ],
    [
      ['id_token_hint', 'a.b.c'],
      ['post_logout_redirect_uri', 'http://localhost:1/cb'],
      ['state', 's'],
      ['client_id', s.appClientId],
    ],
    [],
  );
}

function loginForms(s: Scene): fc.Arbitrary<Form> {
  return fc.constantFrom<Form>(
    [
      ['csrf', s.csrf],
      ['loginName', 'fuzzy'],
    ],
    [
      ['csrf', s.csrf],
      ['loginName', 'fuzzy@example.test'],
      ['password', 'wrong-password'],
    ],
    [
      ['csrf', s.csrf],
      ['loginName', 'nobody'],
      ['password', 'x'],
    ],
    [
      ['csrf', s.csrf],
      ['accountId', s.humanId],
    ],
    [
      ['csrf', s.csrf],
      ['givenName', 'A'],
      ['familyName', 'B'],
      ['email', 'taken@example.test'],
      ['password', 'short'],
      ['passwordRepeat', 'short'],
    ],
    [
      ['csrf', 'forged'],
      ['loginName', 'fuzzy'],
    ],
    [],
  );
}

/** A form as sent: the valid shape, with values replaced, keys duplicated or array-valued, raw NUL or bad escapes. */
function formBodyArb(base: fc.Arbitrary<Form>): fc.Arbitrary<Buffer> {
  const encode = (form: Form) => form.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&');
  return fc.oneof(
    { weight: 3, arbitrary: base.map((form) => Buffer.from(encode(form))) },
    {
      weight: 8,
      arbitrary: fc
        .tuple(base, fc.nat(), hostileText, fc.constantFrom('value', 'duplicate', 'array', 'bracket', 'raw', 'key'))
        .map(([form, pick, text, how]) => {
          const copy: Form = form.map(([k, v]) => [k, v]);
          const i = copy.length ? pick % copy.length : 0;
          const [key, value] = copy[i] ?? ['x', ''];
          if (how === 'value' && copy[i]) copy[i] = [key, text];
          else if (how === 'duplicate') copy.push([key, text]);
          else if (how === 'array') copy.push([`${key}[]`, text]);
          else if (how === 'bracket') copy.push([`${key}[a][b][c][d][e][f][g]`, text]);
          else if (how === 'key') copy.push([text, value]);
          const encoded = encode(copy);
          return Buffer.from(how === 'raw' ? `${encoded}&${key}=${text}` : encoded, 'utf8');
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('%', '%%', '%zz=1', '=&=&&', 'a=%FF%FE', 'a=%00', 'a[=1', 'a]=1', '&'.repeat(3000), `a=${'x'.repeat(70_000)}`)
        .map((t) => Buffer.from(t)),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  );
}

// ---- requests

const contentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/*',
  ';;;',
  '',
);

interface Draft {
  method: string;
  path: string;
  query?: Form;
  headers: Record<string, string | Buffer>;
  body?: Buffer;
}

/** The request target, possibly mangled: another letter case, a trailing slash, NUL, bad escapes, dot segments, overlong. */
function targetArb(path: string, query: Form | undefined): fc.Arbitrary<Buffer> {
  const qs = query?.length ? `?${query.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&')}` : '';
  return fc
    .tuple(
      fc.oneof(
        { weight: 20, arbitrary: fc.constant('none') },
        { weight: 10, arbitrary: fc.constantFrom('upper', 'slash', 'nul', 'rawnul', 'escape', 'dots', 'long', 'double', 'utf8', 'hash') },
      ),
      fc.nat(),
    )
    .map(([how, pick]) => {
      let p = path;
      if (how === 'upper') {
        const i = pick % p.length;
        p = p.slice(0, i) + p.slice(i).toUpperCase();
      } else if (how === 'slash') p += '/';
      else if (how === 'nul') p += '%00';
      else if (how === 'rawnul') p = `${p}\u0000x`;
      else if (how === 'escape') p += pick % 2 ? '%' : '%zz';
      else if (how === 'dots') p = p.replace(/\/[^/]*$/, '/../$&');
      else if (how === 'long') p += `/${'a'.repeat(pick % 2 ? 70 : 9000)}`;
      else if (how === 'double') p = p.replace('/', '//');
      else if (how === 'utf8') p += '/\u00e9%FF%C3%28';
      else if (how === 'hash') p += '#frag';
      return Buffer.from(p + qs, 'latin1');
    });
}

function requestArb(s: Scene): fc.Arbitrary<RawRequest & { label: string }> {
  const templates = jsonTemplates(s);
  const pat = `Bearer ${s.world.pat}`;
  const basic = basicHeader(s.clientId, s.clientSecret);
  const auth = fc.constantFrom<string | undefined>(
    undefined,
    basic,
    basicHeader(s.appClientId, s.appSecret),
    basicHeader(s.clientId, 'wrong'),
    basicHeader('\u0000', ''),
    `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString('base64')}`,
    'Basic !!!',
    'Basic',
    pat,
    `Bearer ${s.accessToken}`,
    'Bearer a.b.c',
    `Bearer ${'x'.repeat(5000)}`,
    'bearer   abc',
    'Negotiate abc',
  );

  const apiDraft: fc.Arbitrary<Draft> = fc.constantFrom(...apiRoutes(s)).chain((route) =>
    fc.record({
      method: fc.constantFrom(...route.methods, 'PATCH', 'GET'),
      path: fc.constant(route.path),
      headers: fc.record(
        {
          authorization: fc.oneof({ weight: 6, arbitrary: fc.constant(pat) }, { weight: 1, arbitrary: auth.map((a) => a ?? '') }),
          'content-type': fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: contentTypes }),
          'x-service-orgid': fc.oneof(
            fc.constant(s.world.defaultOrgId),
            hostileText.map((t) => Buffer.from(t.replace(/[\r\n]/g, ''), 'latin1')),
          ),
        },
        { requiredKeys: ['authorization', 'content-type'] },
      ),
      body: route.body ? jsonBodyArb(templates[route.body]) : fc.option(jsonBodyArb(templates.empty), { nil: undefined }),
    }),
  );

  const formHeaders = fc.record(
    {
      authorization: auth.map((a) => a ?? ''),
      'content-type': fc.oneof({ weight: 6, arbitrary: fc.constant('application/x-www-form-urlencoded') }, { weight: 1, arbitrary: contentTypes }),
      dpop: fc.constantFrom('a.b.c', 'x'),
    },
    { requiredKeys: ['content-type'] },
  );
  const tokenDraft: fc.Arbitrary<Draft> = fc.record({
    method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'OPTIONS'),
    path: fc.constantFrom('/oauth/v2/token', '/oauth/v2/introspect', '/oauth/v2/revoke'),
    headers: formHeaders,
    body: fc.oneof(formBodyArb(tokenForms(s)), formBodyArb(tokenQueryForms(s))),
  });
  const authorizeDraft: fc.Arbitrary<Draft> = fc.oneof(
    fc.record({
      method: fc.constantFrom('GET', 'GET', 'POST', 'HEAD'),
      path: fc.constantFrom('/oauth/v2/authorize', '/oidc/v1/end_session', '/oauth/v2/authorize/abc', '/oidc/v1/end_session/confirm'),
      query: authorizeForms(s).chain((form) =>
        fc
          .tuple(fc.nat(), hostileText)
          .map(([i, t]) => (form.length && i % 2 ? form.map(([k, v], j) => [k, j === i % form.length ? t : v] as [string, string]) : form)),
      ),
      headers: fc.record({ cookie: fc.constantFrom(s.cookies, '_session=abc; _session.sig=def', '\u00ff=\u00ff') }, { requiredKeys: [] }),
    }),
    fc.record({
      method: fc.constant('POST'),
      path: fc.constantFrom('/oauth/v2/authorize', '/oidc/v1/end_session', '/oidc/v1/end_session/confirm'),
      headers: fc.record({ 'content-type': fc.constant('application/x-www-form-urlencoded'), cookie: fc.constantFrom(s.cookies, 'x=y') }),
      body: formBodyArb(authorizeForms(s)),
    }),
  );
  const userinfoDraft: fc.Arbitrary<Draft> = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
    path: fc.constant('/oidc/v1/userinfo'),
    headers: fc.record({ authorization: auth.map((a) => a ?? ''), 'content-type': contentTypes }, { requiredKeys: [] }),
    body: fc.option(formBodyArb(fc.constant<Form>([['access_token', s.accessToken]])), { nil: undefined }),
  });
  const staticDraft: fc.Arbitrary<Draft> = fc.record({
    method: fc.constantFrom('GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE'),
    path: fc.constantFrom(
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
      '/oauth/v2/keys',
      '/healthz',
      '/readyz',
      '/metrics',
      '/',
      '/ui',
      '/ui/login',
      '/nothing',
      '/ui/console',
    ),
    headers: fc.record(
      { origin: fc.constantFrom('http://evil.example', 'null'), 'accept-language': hostileText.map((t) => Buffer.from(t.replace(/[\r\n]/g, ''), 'latin1')) },
      { requiredKeys: [] },
    ),
  });
  const uiDraft: fc.Arbitrary<Draft> = fc.record({
    method: fc.constantFrom('POST', 'POST', 'GET', 'PUT'),
    path: fc.constantFrom(
      ...['', '/login-name', '/password', '/select', '/register', '/ldap/123'].map((p) => `/ui/login/${s.uid}${p}`),
      '/ui/login/unknown-uid/password',
    ),
    query: fc.constantFrom<Form>([], [['other', '1']], [['other', '\u0000']]),
    headers: fc.record(
      {
        cookie: fc.oneof({ weight: 5, arbitrary: fc.constant(s.cookies) }, { weight: 1, arbitrary: fc.constantFrom('_interaction=x', '') }),
        'content-type': fc.oneof({ weight: 6, arbitrary: fc.constant('application/x-www-form-urlencoded') }, { weight: 1, arbitrary: contentTypes }),
        'accept-language': fc.constantFrom('de', 'xx', '*', 'de-CH;q=0.9, en;q=abc'),
      },
      { requiredKeys: ['cookie', 'content-type'] },
    ),
    body: formBodyArb(loginForms(s)),
  });
  const oddMethod: fc.Arbitrary<Draft> = fc.record({
    method: fc.constantFrom('PROPFIND', 'FOO', 'MKCOL', 'TRACE', 'CONNECT', 'get', 'M-SEARCH'),
    path: fc.constantFrom('/oauth/v2/token', '/admin/v1/orgs/_setup', `/ui/login/${s.uid}`, '/healthz'),
    headers: fc.constant({ authorization: pat }),
  });

  return fc
    .oneof(
      { weight: 6, arbitrary: apiDraft },
      { weight: 4, arbitrary: tokenDraft },
      { weight: 2, arbitrary: authorizeDraft },
      { weight: 1, arbitrary: userinfoDraft },
      { weight: 1, arbitrary: staticDraft },
      { weight: 3, arbitrary: uiDraft },
      { weight: 1, arbitrary: oddMethod },
    )
    .chain((draft) =>
      targetArb(draft.path, draft.query).map((target) => ({
        label: `${draft.method} ${JSON.stringify(target.toString('latin1').slice(0, 120))}`,
        // fast-check prints a failing batch with this instead of every byte.
        [fc.toStringMethod]: () =>
          `${draft.method} ${JSON.stringify(target.toString('latin1').slice(0, 120))} ${JSON.stringify(draft.body?.toString('latin1').slice(0, 200) ?? '')}`,
        method: draft.method,
        target,
        headers: Object.entries(draft.headers)
          .filter(([, v]) => v !== '' && v !== undefined)
          .map(([k, v]) => [k, Buffer.isBuffer(v) ? v : Buffer.from(v, 'utf8')] as [string, Buffer]),
        ...(draft.body ? { body: draft.body } : {}),
      })),
    );
}

test(`${BATCHES * BATCH_SIZE} generated hostile requests over every endpoint: no 5xx, no hang, the server still serves`, { timeout: 600_000 }, async (t) => {
  const statuses = new Map<number, number>();
  let sent = 0;
  let serverErrors = 0;
  t.diagnostic(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb(scene), { minLength: BATCH_SIZE, maxLength: BATCH_SIZE }), async (batch) => {
        const answers = await Promise.all(
          batch.map((r) =>
            sendRaw(scene.port, r).then(
              (a) => ({ r, a }),
              (err: Error) => {
                throw new Error(`${r.label}: ${err.message}`);
              },
            ),
          ),
        );
        for (const { r, a } of answers) {
          sent++;
          statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
          const unknownMethod = a.status === 501 && !RFC9110_METHODS.includes(r.method);
          if (a.status >= 500 && !unknownMethod) {
            serverErrors++;
            throw new Error(`${r.label} answered ${a.status}: ${a.body.toString('utf8').slice(0, 300)}`);
          }
        }
      }),
      { numRuns: BATCHES, seed: SEED, endOnFailure: true },
    );
  } finally {
    t.diagnostic(
      `${sent} requests answered, ${serverErrors} with a 5xx; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
    );
  }
  assert.ok(sent >= BATCHES * BATCH_SIZE, `only ${sent} requests were answered`);

  // Still up, and still correct for a well-formed request.
  const health = await request(`${scene.world.server.url}/healthz`);
  assert.equal(health.status, 200);
  const token = await request(`${scene.world.server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicHeader(scene.clientId, scene.clientSecret) },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'openid' }),
  });
  assert.equal(token.status, 200, token.text);
  const me = await request(`${scene.world.server.url}/management/v1/users/${scene.humanId}`, { headers: { authorization: `Bearer ${scene.world.pat}` } });
  assert.equal(me.status, 200, me.text);
});

test('the requests that answered 5xx before the fuzz found them are 4xx', async () => {
  const raw = (method: string, target: string, headers: Array<[string, string]> = []) =>
    sendRaw(scene.port, { method, target: Buffer.from(target, 'latin1'), headers: headers.map(([k, v]) => [k, Buffer.from(v)]) });
  const pat: Array<[string, string]> = [['authorization', `Bearer ${scene.world.pat}`]];
  // CONNECT was left unanswered (the connection closed), TRACE answered 501.
  assert.equal((await raw('CONNECT', '/healthz')).status, 405);
  assert.equal((await raw('TRACE', '/admin/v1/orgs/_setup', pat)).status, 405);
  // A login page path in another letter case skipped the page's own error handling.
  assert.equal((await raw('POST', `/ui/lOGIN/${scene.uid}/LOGIN-NAME`, [['content-type', 'application/x-www-form-urlencoded']])).status, 404);
  // The second id of a path (the app's) was not checked before SQL.
  const nul = await raw('GET', `/management/v1/projects/${scene.projectId}/apps/oidc%00`, pat);
  assert.equal(nul.status, 404);
  assert.equal(JSON.parse(nul.body.toString()).code, 5);
  // A role key of the path (not an id) reached SQL with its NUL (seed 108605166).
  for (const [method, target] of [
    ['DELETE', `/management/v1/projects/${scene.projectId}/roles/nobody%00`],
    ['DELETE', `/management/v1/projects/${scene.projectId}/roles/a%01b`],
    ['DELETE', `/management/v1/projects/${scene.projectId}/roles/${'k'.repeat(201)}`],
    ['DELETE', `/management/v1/projects/${scene.projectId}/roles/%ED%A0%80`],
  ] as const) {
    const answer = await raw(method, target, pat);
    assert.equal(answer.status, 404, `${method} ${target}: ${answer.body.toString().slice(0, 200)}`);
  }
});
