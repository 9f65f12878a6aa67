import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from './args.ts';
import type { Command } from './command.ts';
import { CliError } from './cli-error.ts';
import { INTEGRATION_COMMANDS } from './integration-commands.ts';
import { POLICY_COMMANDS } from './policy-commands.ts';
import { NOTIFY_COMMANDS } from './notify-commands.ts';
import { readSecretFile } from './files.ts';
import { LIST_COMMANDS } from './list-commands.ts';
import { isObject } from './http.ts';
import { json, secretLines } from './output.ts';
import {
  APP_TOKEN_TYPE_CHOICES,
  APP_TYPE_CHOICES,
  AUTH_METHOD_CHOICES,
  expiration,
  GRANT_TYPE_CHOICES,
  list,
  mapped,
  oneOf,
  RESPONSE_TYPE_CHOICES,
  str,
  USER_TOKEN_TYPE_CHOICES,
} from './option-values.ts';
import { APP_DEFAULTS } from '../src/domain/apps.ts';
import { DEFAULT_MACHINE_ACCESS_TOKEN_TYPE } from '../src/domain/users.ts';

/** `remove-otp-codes --by`: the removal path of each kind of sign-in codes. */
const CODE_FACTOR_PATHS: Record<string, string> = { email: 'otp_email', sms: 'otp_sms' };

// The commands table: for each command its options, the API call it makes
// and the human-readable lines of its result.

export { CliError };

const id = (value: string) => encodeURIComponent(value);

/** The key file inside an add-key answer. */
function keyFile(response: Record<string, any>): string {
  return Buffer.from(String(response.keyDetails ?? ''), 'base64').toString('utf8');
}

/** A state change of another user: `POST /management/v1/users/{userId}/{action}` without a body. */
function userStateCommand(name: string, action: string, summary: string, done: string): Command {
  return {
    name,
    summary: `${summary} (needs ORG_OWNER or ORG_USER_MANAGER holding every role of the user)`,
    options: { user: { type: 'string', arg: '<userId>', description: 'user id' } },
    required: ['user'],
    request: (values) => ({ method: 'POST', path: `/management/v1/users/${id(str(values, 'user')!)}/${action}`, body: {} }),
    describe: (_r, v) => [`${done} user ${str(v, 'user')}`],
  };
}

export const COMMANDS: Command[] = [
  {
    name: 'setup-org',
    summary: "create an organization with its first human user and that user's org roles (needs IAM_OWNER)",
    options: {
      name: { type: 'string', arg: '<org>', description: 'organization name' },
      domain: { type: 'string', arg: '<domain>', description: 'primary domain (default: generated from the name)' },
      user: { type: 'string', arg: '<userName>', description: 'user name of the first user' },
      'first-name': { type: 'string', arg: '<first>', description: 'first name' },
      'last-name': { type: 'string', arg: '<last>', description: 'last name' },
      email: { type: 'string', arg: '<email>', description: 'email address' },
      password: { type: 'string', arg: '<password>', description: 'initial password (visible to other local users; prefer --password-file)' },
      'password-file': { type: 'string', arg: '<file>', description: 'file holding the initial password' },
      role: { type: 'string', multiple: true, arg: '<role>', description: 'org role, repeatable (default ORG_OWNER)' },
    },
    required: ['name', 'user', 'first-name', 'last-name', 'email'],
    request(values) {
      const file = str(values, 'password-file');
      if (file !== undefined && str(values, 'password') !== undefined) throw new UsageError('give --password or --password-file, not both', 'setup-org');
      const password = file !== undefined ? readSecretFile(file, 'password file') : str(values, 'password');
      const domain = str(values, 'domain');
      const roles = list(values, 'role');
      return {
        method: 'POST',
        path: '/admin/v1/orgs/_setup',
        body: {
          org: { name: str(values, 'name'), ...(domain !== undefined ? { domain } : {}) },
          human: {
            userName: str(values, 'user'),
            profile: { firstName: str(values, 'first-name'), lastName: str(values, 'last-name') },
            email: { email: str(values, 'email') },
            ...(password !== undefined ? { password } : {}),
          },
          ...(roles.length ? { roles } : {}),
        },
      };
    },
    describe: (r, v) => [`Created org ${str(v, 'name')} (orgId ${r.orgId}), user ${str(v, 'user')} (userId ${r.userId})`],
  },
  {
    name: 'add-project',
    summary: 'create a project in the org',
    options: { name: { type: 'string', arg: '<name>', description: 'project name' } },
    required: ['name'],
    request: (values) => ({ method: 'POST', path: '/management/v1/projects', body: { name: str(values, 'name') } }),
    describe: (r, v) => [`Created project ${str(v, 'name')} (projectId ${r.id})`],
  },
  {
    name: 'add-app',
    summary: 'create an OIDC app (client) in a project',
    options: {
      project: { type: 'string', arg: '<projectId>', description: 'project id' },
      name: { type: 'string', arg: '<name>', description: 'app name' },
      'redirect-uri': { type: 'string', multiple: true, arg: '<uri>', description: 'redirect URI, repeatable' },
      'post-logout-uri': { type: 'string', multiple: true, arg: '<uri>', description: 'post-logout redirect URI, repeatable' },
      type: { type: 'string', arg: '<type>', description: oneOf(APP_TYPE_CHOICES, APP_DEFAULTS.appType) },
      auth: { type: 'string', arg: '<method>', description: `client authentication: ${oneOf(AUTH_METHOD_CHOICES, APP_DEFAULTS.authMethodType)}` },
      'response-type': {
        type: 'string',
        multiple: true,
        arg: '<type>',
        description: `${oneOf(RESPONSE_TYPE_CHOICES, APP_DEFAULTS.responseTypes[0]!)}; repeatable`,
      },
      grant: {
        type: 'string',
        multiple: true,
        arg: '<grant>',
        description: `${oneOf(GRANT_TYPE_CHOICES, APP_DEFAULTS.grantTypes[0]!)}; repeatable`,
      },
      'access-token': {
        type: 'string',
        arg: '<type>',
        description: `${oneOf(APP_TOKEN_TYPE_CHOICES, APP_DEFAULTS.accessTokenType)}; bearer tokens are opaque`,
      },
      'dev-mode': { type: 'boolean', description: 'allow http and localhost redirect URIs' },
      'id-token-userinfo': { type: 'boolean', description: 'put the userinfo claims into the ID token' },
      'iam-api-access': { type: 'boolean', description: "may obtain tokens for this service's admin API (IAM_OWNER, apps of the first org only)" },
      'require-par': { type: 'boolean', description: 'accept authorization requests only through /oauth/v2/par (RFC 9126)' },
      dpop: { type: 'boolean', description: 'issue only DPoP-bound access tokens: token requests must carry a DPoP proof (RFC 9449)' },
      'backchannel-logout-uri': {
        type: 'string',
        arg: '<uri>',
        description: 'where logout tokens are POSTed (OIDC Back-Channel Logout); https unless --dev-mode',
      },
      'backchannel-logout-session': { type: 'boolean', description: 'logout tokens carry the session id (sid)' },
    },
    required: ['project', 'name'],
    request(values) {
      const body: Record<string, unknown> = { name: str(values, 'name') };
      const redirects = list(values, 'redirect-uri');
      const logouts = list(values, 'post-logout-uri');
      const responses = list(values, 'response-type');
      const grants = list(values, 'grant');
      const type = str(values, 'type');
      const auth = str(values, 'auth');
      const token = str(values, 'access-token');
      if (redirects.length) body.redirectUris = redirects;
      if (logouts.length) body.postLogoutRedirectUris = logouts;
      if (responses.length) body.responseTypes = responses.map((r) => mapped('add-app', 'response-type', r, RESPONSE_TYPE_CHOICES));
      if (grants.length) body.grantTypes = grants.map((g) => mapped('add-app', 'grant', g, GRANT_TYPE_CHOICES));
      if (type !== undefined) body.appType = mapped('add-app', 'type', type, APP_TYPE_CHOICES);
      if (auth !== undefined) body.authMethodType = mapped('add-app', 'auth', auth, AUTH_METHOD_CHOICES);
      if (token !== undefined) body.accessTokenType = mapped('add-app', 'access-token', token, APP_TOKEN_TYPE_CHOICES);
      if (values['dev-mode'] === true) body.devMode = true;
      if (values['id-token-userinfo'] === true) body.idTokenUserinfoAssertion = true;
      if (values['iam-api-access'] === true) body.iamApiAccess = true;
      if (values['require-par'] === true) body.requirePushedAuthorizationRequests = true;
      if (values.dpop === true) body.dpopBoundAccessTokens = true;
      const logoutUri = str(values, 'backchannel-logout-uri');
      if (logoutUri !== undefined) body.backChannelLogoutUri = logoutUri;
      if (values['backchannel-logout-session'] === true) body.backChannelLogoutSessionRequired = true;
      return { method: 'POST', path: `/management/v1/projects/${id(str(values, 'project')!)}/apps/oidc`, body };
    },
    describe: (r, v) => [
      `Created app ${str(v, 'name')} (appId ${r.appId}), clientId ${r.clientId}`,
      ...(typeof r.clientSecret === 'string' ? secretLines('Client secret', r.clientSecret) : []),
    ],
  },
  {
    name: 'add-machine-user',
    summary: 'create a machine user (service account) in the org',
    options: {
      user: { type: 'string', arg: '<userName>', description: 'user name; the client_id of the client_credentials grant' },
      name: { type: 'string', arg: '<name>', description: 'display name' },
      description: { type: 'string', arg: '<text>', description: 'description' },
      'access-token': {
        type: 'string',
        arg: '<type>',
        description: `${oneOf(USER_TOKEN_TYPE_CHOICES, DEFAULT_MACHINE_ACCESS_TOKEN_TYPE)}; bearer tokens are opaque`,
      },
    },
    required: ['user', 'name'],
    request(values) {
      const description = str(values, 'description');
      const token = str(values, 'access-token');
      return {
        method: 'POST',
        path: '/management/v1/users/machine',
        body: {
          userName: str(values, 'user'),
          name: str(values, 'name'),
          ...(description !== undefined ? { description } : {}),
          ...(token !== undefined ? { accessTokenType: mapped('add-machine-user', 'access-token', token, USER_TOKEN_TYPE_CHOICES) } : {}),
        },
      };
    },
    describe: (r, v) => [`Created machine user ${str(v, 'user')} (userId ${r.userId})`],
  },
  {
    name: 'add-key',
    summary: 'create a JSON key of a machine user (JWT profile grant); the key file is shown once',
    options: {
      user: { type: 'string', arg: '<userId>', description: 'machine user id' },
      expires: { type: 'string', arg: '<date>', description: 'expiry, ISO 8601 (e.g. 2030-01-01); default: never' },
      out: { type: 'string', arg: '<file>', description: 'write the key file here (mode 0600) instead of printing it' },
    },
    required: ['user'],
    request(values) {
      const out = str(values, 'out');
      if (out !== undefined) checkWritable(out);
      return {
        method: 'POST',
        path: `/management/v1/users/${id(str(values, 'user')!)}/keys`,
        body: { type: 'KEY_TYPE_JSON', ...expiration('add-key', values) },
      };
    },
    after(response, values) {
      const out = str(values, 'out');
      if (out === undefined) return;
      try {
        writeFileSync(out, `${keyFile(response)}\n`, { mode: 0o600 });
        chmodSync(out, 0o600);
      } catch (err) {
        throw new CliError(`cannot write ${out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, secretLines('Key file', keyFile(response)));
      }
    },
    describe(r, v) {
      const out = str(v, 'out');
      const head = `Created key ${r.keyId} for user ${str(v, 'user')}`;
      if (out !== undefined)
        return [head, `Key file written to ${out} (mode 0600). It is shown once: keep it safe, the private key cannot be retrieved again.`];
      return [head, ...secretLines('Key file', keyFile(r))];
    },
  },
  {
    name: 'add-secret',
    summary: 'generate a client secret of a machine user (client_credentials grant); replaces the previous one',
    options: { user: { type: 'string', arg: '<userId>', description: 'machine user id' } },
    required: ['user'],
    request: (values) => ({ method: 'PUT', path: `/management/v1/users/${id(str(values, 'user')!)}/secret`, body: {} }),
    describe: (r) => [`clientId: ${r.clientId}`, ...secretLines('Client secret', String(r.clientSecret))],
  },
  {
    name: 'add-pat',
    summary: 'create a personal access token of a machine user',
    options: {
      user: { type: 'string', arg: '<userId>', description: 'machine user id' },
      expires: { type: 'string', arg: '<date>', description: 'expiry, ISO 8601 (e.g. 2030-01-01); default: never' },
    },
    required: ['user'],
    request: (values) => ({ method: 'POST', path: `/management/v1/users/${id(str(values, 'user')!)}/pats`, body: expiration('add-pat', values) }),
    describe: (r, v) => [`Created personal access token ${r.tokenId} for user ${str(v, 'user')}`, ...secretLines('Token', String(r.token))],
  },
  {
    name: 'unlock',
    summary: 'unlock a user locked by the lockout policy (needs ORG_OWNER or ORG_USER_MANAGER)',
    options: { user: { type: 'string', arg: '<userId>', description: 'user id' } },
    required: ['user'],
    request: (values) => ({ method: 'POST', path: `/management/v1/users/${id(str(values, 'user')!)}/_unlock`, body: {} }),
    describe: (_r, v) => [`Unlocked user ${str(v, 'user')}`],
  },
  userStateCommand('lock', '_lock', 'lock a user until an admin unlocks it; its tokens end', 'Locked'),
  userStateCommand('deactivate', '_deactivate', 'deactivate a user: no sign-in, its tokens end', 'Deactivated'),
  userStateCommand('reactivate', '_reactivate', 'make a deactivated user active again', 'Reactivated'),
  {
    name: 'auth-factors',
    summary: "list a user's second factors (needs ORG_OWNER or ORG_USER_MANAGER)",
    options: { user: { type: 'string', arg: '<userId>', description: 'user id' } },
    required: ['user'],
    request: (values) => ({ method: 'GET', path: `/management/v1/users/${id(str(values, 'user')!)}/auth_factors` }),
    describe: (r, v) => {
      const factors = (r.result as Array<{ otp?: object; otpEmail?: object; otpSms?: object; u2f?: { id: string; name: string }; state: string }>).map(
        (f) =>
          `${f.u2f ? `passkey ${f.u2f.id} (${f.u2f.name})` : f.otpEmail ? 'otp-codes email' : f.otpSms ? 'otp-codes sms' : 'otp (authenticator app)'}\t${f.state}`,
      );
      return factors.length ? factors : [`User ${str(v, 'user')} has no second factor`];
    },
  },
  {
    name: 'remove-otp',
    summary: "remove a user's authenticator app and its recovery codes, e.g. when the device is lost (needs ORG_OWNER or ORG_USER_MANAGER)",
    options: { user: { type: 'string', arg: '<userId>', description: 'user id' } },
    required: ['user'],
    request: (values) => ({ method: 'DELETE', path: `/management/v1/users/${id(str(values, 'user')!)}/auth_factors/otp` }),
    describe: (_r, v) => [`Removed the authenticator app of user ${str(v, 'user')}`],
  },
  {
    name: 'remove-otp-codes',
    summary: "remove a user's sign-in codes by email or SMS (needs ORG_OWNER or ORG_USER_MANAGER)",
    options: {
      user: { type: 'string', arg: '<userId>', description: 'user id' },
      by: { type: 'string', arg: '<email|sms>', description: 'the codes to remove: email or sms' },
    },
    required: ['user', 'by'],
    request: (values) => ({
      method: 'DELETE',
      path: `/management/v1/users/${id(str(values, 'user')!)}/auth_factors/${mapped('remove-otp-codes', 'by', str(values, 'by')!, CODE_FACTOR_PATHS)}`,
    }),
    describe: (_r, v) => [`Removed the sign-in codes by ${str(v, 'by')!.toLowerCase()} of user ${str(v, 'user')}`],
  },
  {
    name: 'remove-passkey',
    summary: "remove one of a user's passkeys, e.g. when the device is lost (needs ORG_OWNER or ORG_USER_MANAGER)",
    options: {
      user: { type: 'string', arg: '<userId>', description: 'user id' },
      passkey: { type: 'string', arg: '<passkeyId>', description: 'passkey id (from auth-factors)' },
    },
    required: ['user', 'passkey'],
    request: (values) => ({ method: 'DELETE', path: `/management/v1/users/${id(str(values, 'user')!)}/passkeys/${id(str(values, 'passkey')!)}` }),
    describe: (_r, v) => [`Removed passkey ${str(v, 'passkey')} of user ${str(v, 'user')}`],
  },
  ...POLICY_COMMANDS,
  ...LIST_COMMANDS,
  ...NOTIFY_COMMANDS,
  ...INTEGRATION_COMMANDS,
  {
    name: 'rotate-keys',
    summary: 'rotate the signing keys (needs IAM_OWNER)',
    options: {},
    required: [],
    request: () => ({ method: 'POST', path: '/admin/v1/signing_keys/_rotate', body: {} }),
    describe: (r) => [
      'Rotated the signing keys.',
      ...Object.entries(r)
        .filter(([key]) => key !== 'details')
        .map(([key, value]) => `${key}: ${isObject(value) || Array.isArray(value) ? json(value) : String(value)}`),
    ],
  },
];

/** Fails before the call when --out cannot be written, so no key is created and lost. */
function checkWritable(path: string): void {
  let isDir = false;
  try {
    isDir = statSync(dirname(resolve(path))).isDirectory();
  } catch {
    // missing folder
  }
  if (!isDir) throw new CliError(`cannot write ${path}: folder ${dirname(resolve(path))} does not exist`);
  try {
    if (statSync(path).isDirectory()) throw new CliError(`cannot write ${path}: it is a folder`);
  } catch (err) {
    if (err instanceof CliError) throw err;
  }
}
