import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { PATCH_OP, USER, startScimWorld, userBody, type ScimWorld } from './support.ts';

// Generated hostile requests (fast-check) over every SCIM endpoint with a
// valid token: bodies of any JSON shape, resources with random attributes
// and values, PATCH operations with random paths and values, filters and
// paging parameters of random text, attribute lists, .search and Bulk
// bodies, If-Match and If-None-Match headers. None may get a 5xx; every 4xx
// carries the SCIM error body; the server still serves afterwards.

let w: ScimWorld;
let victimId: string;

before(async () => {
  w = await startScimWorld();
  victimId = (await w.create('fuzz-victim')).id;
});

after(async () => {
  await w?.stop();
});

const text = fc.oneof(
  fc.string({ maxLength: 40, unit: 'binary' }),
  fc.constantFrom('userName', 'emails[type eq "work"].value', 'name.givenName', 'active', 'externalId', 'id', 'meta', `${USER}:userName`, ''),
);
const scalar = fc.oneof(text, fc.boolean(), fc.integer(), fc.double(), fc.constant(null));
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(text, fc.constantFrom('userName', 'emails', 'name', 'active', 'schemas', 'Operations', 'op', 'path', 'value')), tie('value'), {
      maxKeys: 5,
    }),
  ),
})).value;

const resource = fc
  .record({ userName: fc.oneof(text, fc.constant('fuzz-user')), extra: fc.dictionary(text, json, { maxKeys: 3 }), active: scalar })
  .map(({ userName, extra, active }) => userBody(typeof userName === 'string' && userName ? userName : 'fuzz-user', { ...extra, active }));
const operation = fc.record({
  op: fc.oneof(fc.constantFrom('add', 'replace', 'remove', 'Replace'), text),
  path: fc.option(text, { nil: undefined }),
  value: json,
});
const names = fc.oneof(text, fc.constantFrom('userName,name.givenName', 'emails.value, meta', `${USER}:name.familyName`, 'a..b', ',', 'x'.repeat(5000)));
const headerText = fc.oneof(
  text.map((t) => t.replace(/[^\x20-\x7e]/g, '')),
  fc.constantFrom('W/"1"', '"a", W/"b"', 'W/', '""', ',,', '"a"b'),
);
const searchBody = fc
  .record(
    {
      schemas: fc.oneof(fc.constant(['urn:ietf:params:scim:api:messages:2.0:SearchRequest']), json),
      filter: fc.oneof(text, json),
      sortBy: fc.oneof(text, json),
      sortOrder: fc.oneof(fc.constantFrom('ascending', 'descending'), text),
      startIndex: fc.oneof(fc.integer(), json),
      count: fc.oneof(fc.integer(), json),
      attributes: fc.oneof(names, fc.array(names, { maxLength: 3 }), json),
      excludedAttributes: fc.oneof(names, json),
    },
    { requiredKeys: [] },
  )
  .map((body) => body as unknown);
const bulkOperation = fc.record(
  {
    method: fc.oneof(fc.constantFrom('POST', 'PUT', 'patch', 'DELETE', 'GET'), text),
    path: fc.oneof(fc.constantFrom('/Users', '/Users/nobody-here', '/Users/bulkId:b1', '/Groups', '/Users/%zz'), text),
    bulkId: fc.oneof(fc.constantFrom('b1', 'b2'), text),
    version: fc.oneof(headerText, json),
    data: fc.oneof(resource, json),
  },
  { requiredKeys: [] },
);
const bulkBody = fc
  .record(
    {
      schemas: fc.oneof(fc.constant(['urn:ietf:params:scim:api:messages:2.0:BulkRequest']), json),
      failOnErrors: fc.oneof(fc.integer(), json),
      Operations: fc.oneof(fc.array(bulkOperation, { maxLength: 4 }), json),
    },
    { requiredKeys: [] },
  )
  .map((body) => body as unknown);
const patchBody = fc.array(operation, { minLength: 1, maxLength: 4 }).map((Operations) => ({ schemas: [PATCH_OP], Operations }));

const call = fc.oneof(
  fc.record({ method: fc.constant('POST'), path: fc.constant('/Users'), body: fc.oneof(resource, json) }),
  fc.record({ method: fc.constant('PUT'), path: fc.constant('/Users/VICTIM'), body: fc.oneof(resource, json) }),
  fc.record({ method: fc.constant('PATCH'), path: fc.constant('/Users/VICTIM'), body: fc.oneof(patchBody, json) }),
  fc
    .record({ filter: text, sortBy: text, startIndex: text, count: text })
    .map((query) => ({ method: 'GET', path: `/Users?${new URLSearchParams(query)}`, body: undefined as unknown })),
  fc.record({ method: fc.constantFrom('POST'), path: fc.constantFrom('/Users/.search', '/.search'), body: fc.oneof(searchBody, json) }),
  fc.record({ method: fc.constant('POST'), path: fc.constant('/Bulk'), body: fc.oneof(bulkBody, json) }),
  fc.record({ attributes: names, excludedAttributes: names }, { requiredKeys: [] }).chain((query) =>
    fc.record({
      method: fc.constantFrom('GET', 'PATCH', 'PUT'),
      path: fc.constantFrom(`/Users?${new URLSearchParams(query)}`, `/Users/VICTIM?${new URLSearchParams(query)}`),
      body: fc.oneof(patchBody, resource),
    }),
  ),
  fc.record({
    method: fc.constantFrom('GET', 'PATCH', 'PUT'),
    path: fc.constant('/Users/VICTIM'),
    body: fc.oneof(patchBody, resource),
    headers: fc.oneof(
      headerText.map((value) => ({ 'if-match': value })),
      headerText.map((value) => ({ 'if-none-match': value })),
    ),
  }),
  fc.record({ method: fc.constantFrom('GET', 'DELETE', 'PATCH', 'PUT'), path: text.map((t) => `/Users/${encodeURIComponent(t)}`), body: json }),
  fc.record({ method: fc.constantFrom('GET', 'POST'), path: text.map((t) => `/${encodeURIComponent(t)}`), body: json }),
);

it('no generated SCIM request gets a 5xx; every error is a SCIM error body', async () => {
  await fc.assert(
    fc.asyncProperty(call, async ({ method, path, body, headers }: { method: string; path: string; body: unknown; headers?: Record<string, string> }) => {
      const options = body === undefined || method === 'GET' || method === 'DELETE' ? {} : { body };
      const res = await w.scim(method, path.replace('VICTIM', victimId), { ...options, ...(headers ? { headers } : {}) });
      if (res.status >= 400) {
        assert.deepEqual(res.body?.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error'], `${method} ${path}: ${res.text.slice(0, 300)}`);
        assert.equal(res.body.status, String(res.status));
      }
    }),
    { numRuns: 1000 },
  );
  assert.equal((await w.scim('GET', '/ServiceProviderConfig')).status, 200);
});
