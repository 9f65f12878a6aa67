import assert from 'node:assert/strict';
import { testServer, type TestServer } from '../support/server.ts';
import { basicHeader, request, type ApiResponse } from '../support/api.ts';
import { passwordForm, passwordFormAppWithSecret } from '../support/login-form.ts';

// A server with what every SCIM test needs: the default org, another org,
// a provisioning machine user (ORG_USER_MANAGER) with its PAT, an org owner,
// and an app to sign in with; SCIM calls and the SCIM error assertion.

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const PASSWORD = 'Secret-Passw0rd!';

export interface ScimCall {
  body?: unknown;
  raw?: string;
  token?: string | null;
  contentType?: string;
  org?: string;
  headers?: Record<string, string>;
}

export interface ScimWorld {
  server: TestServer;
  orgId: string;
  domain: string;
  otherOrgId: string;
  /** PAT of the provisioning machine user: ORG_USER_MANAGER of the default org. */
  scimPat: string;
  /** PAT of an ORG_OWNER of the other org. */
  otherOrgPat: string;
  /** PAT of a machine user without roles. */
  nobodyPat: string;
  /** A human ORG_OWNER of the default org (password PASSWORD). */
  ownerId: string;
  app: { clientId: string; clientSecret: string };
  scim(method: string, path: string, options?: ScimCall): Promise<ApiResponse>;
  create(userName: string, extra?: Record<string, unknown>): Promise<any>;
  patch(id: string, ...operations: unknown[]): Promise<ApiResponse>;
  eventTypesOf(aggregateId: string): Promise<string[]>;
  assertNothingWritten(refused: () => Promise<void>): Promise<void>;
  signsIn(userName: string): Promise<boolean>;
  introspect(token: string): Promise<any>;
  stop(): Promise<void>;
}

export function assertScimError(res: ApiResponse, status: number, scimType?: string): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(res.body.schemas, [ERROR]);
  assert.equal(res.body.status, String(status));
  assert.equal(typeof res.body.detail, 'string');
  if (scimType) assert.equal(res.body.scimType, scimType, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/scim\+json/);
}

export function userBody(userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemas: [USER],
    userName,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ value: `${userName}@example.com`, type: 'work', primary: true }],
    ...extra,
  };
}

export async function startScimWorld(): Promise<ScimWorld> {
  const server = await testServer();
  const api = server.api;
  const { rows } = await server.running.db.query<{ org_id: string; domain: string }>(
    `SELECT u.org_id, d.domain FROM users u JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary WHERE u.user_name = 'portcullis-admin'`,
  );
  const { org_id: orgId, domain } = rows[0]!;

  const machineWithPat = async (userName: string, roles: string[], org?: string): Promise<string> => {
    const machine = await api('POST', '/management/v1/users/machine', { body: { userName, name: userName }, orgId: org });
    assert.equal(machine.status, 200, machine.text);
    if (roles.length) {
      const member = await api('POST', '/management/v1/orgs/me/members', { body: { userId: machine.body.userId, roles }, orgId: org });
      assert.equal(member.status, 200, member.text);
    }
    const pat = await api('POST', `/management/v1/users/${machine.body.userId}/pats`, { body: {}, orgId: org });
    assert.equal(pat.status, 200, pat.text);
    return pat.body.token;
  };

  const setup = await api('POST', '/admin/v1/orgs/_setup', {
    body: { org: { name: 'Other Org' }, human: { userName: 'other', profile: { firstName: 'O', lastName: 'O' }, email: { email: 'o@example.com' } } },
  });
  assert.equal(setup.status, 200, setup.text);
  const otherOrgId: string = setup.body.orgId;
  const scimPat = await machineWithPat('scim-client', ['ORG_USER_MANAGER']);
  const otherOrgPat = await machineWithPat('other-scim-client', ['ORG_OWNER'], otherOrgId);
  const nobodyPat = await machineWithPat('nobody', []);
  const owner = await api('POST', '/management/v1/users/human', {
    body: { userName: 'the-owner', profile: { firstName: 'O', lastName: 'Wner' }, email: { email: 'owner@example.com' }, password: PASSWORD },
  });
  assert.equal(owner.status, 200, owner.text);
  const ownerId: string = owner.body.userId;
  const member = await api('POST', '/management/v1/orgs/me/members', { body: { userId: ownerId, roles: ['ORG_OWNER'] } });
  assert.equal(member.status, 200, member.text);
  const app = await passwordFormAppWithSecret(api, 'SCIM sign-ins');

  const scim = (method: string, path: string, options: ScimCall = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? scimPat : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/scim+json';
    const init = { method, headers, ...(body === undefined ? {} : { body }) };
    return request(`${server.url}/scim/v2/${options.org ?? orgId}${path}`, init, { strictJson: true });
  };

  const state = async () => {
    const users = await server.running.db.query('SELECT * FROM users ORDER BY id');
    const events = await server.running.db.query<{ n: string }>('SELECT count(*)::text AS n FROM events');
    return JSON.stringify([users.rows, events.rows]);
  };

  return {
    server,
    orgId,
    domain,
    otherOrgId,
    scimPat,
    otherOrgPat,
    nobodyPat,
    ownerId,
    app,
    scim,
    async create(userName, extra = {}) {
      const res = await scim('POST', '/Users', { body: userBody(userName, extra) });
      assert.equal(res.status, 201, res.text);
      return res.body;
    },
    patch: (id, ...operations) => scim('PATCH', `/Users/${id}`, { body: { schemas: [PATCH_OP], Operations: operations } }),
    async eventTypesOf(aggregateId) {
      const { rows: events } = await server.running.db.query<{ event_type: string }>(
        'SELECT event_type FROM events WHERE aggregate_id = $1 ORDER BY position',
        [aggregateId],
      );
      return events.map((row) => row.event_type);
    },
    async assertNothingWritten(refused) {
      const before = await state();
      await refused();
      assert.equal(await state(), before, 'nothing was written');
    },
    async signsIn(userName) {
      const form = await passwordForm(server.url, app.clientId);
      return (await form(`${userName}@${domain}`, PASSWORD)).status === 303;
    },
    async introspect(token) {
      const res = await request(`${server.url}/oauth/v2/introspect`, {
        method: 'POST',
        headers: { authorization: basicHeader(app.clientId, app.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      assert.equal(res.status, 200, res.text);
      return res.body;
    },
    stop: () => server.stop(),
  };
}
