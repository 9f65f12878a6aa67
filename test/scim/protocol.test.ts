import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { USER, assertScimError, startScimWorld, userBody, type ScimWorld } from './support.ts';

// What provisioning clients ask beyond plain CRUD (docs/api/scim.md):
// `attributes` / `excludedAttributes` (RFC 7644 3.9), POST .search (RFC
// 7644 3.4.3), ETags with If-Match and If-None-Match (RFC 7644 3.14), Bulk
// (RFC 7644 3.7), and the clear refusal of Groups. Bad inputs are SCIM
// errors and change nothing.

const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

let w: ScimWorld;
let ada: any;

before(async () => {
  w = await startScimWorld();
  ada = await w.create('pe-ada', { externalId: 'pe-1', nickName: 'Countess' });
  await w.create('pe-bob');
  await w.create('pe-cy');
});

after(async () => {
  await w?.stop();
});

const get = (id: string, headers: Record<string, string>) => w.scim('GET', `/Users/${id}`, { headers });
const withHeaders = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  w.scim(method, path, { headers, ...(body === undefined ? {} : { body }) });

describe('attributes and excludedAttributes (RFC 7644 3.9)', () => {
  it('attributes: only those named, with sub-attributes, plus id and schemas', async () => {
    const res = await w.scim('GET', `/Users/${ada.id}?attributes=userName,name.givenName,emails.value`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { schemas: [USER], id: ada.id, userName: 'pe-ada', name: { givenName: 'Ada' }, emails: [{ value: 'pe-ada@example.com' }] });
  });

  it('names in any letter case, qualified with the schema URI; unknown names and other schemas are passed over', async () => {
    const query = new URLSearchParams({
      attributes: `${USER}:USERNAME, meta.version,favouriteColour,urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department,name.middleName`,
    });
    const res = await w.scim('GET', `/Users/${ada.id}?${query}`);
    assert.deepEqual(res.body, { schemas: [USER], id: ada.id, userName: 'pe-ada', meta: { version: ada.meta.version } });
    const none = await w.scim('GET', `/Users/${ada.id}?attributes=nothingKnown`);
    assert.deepEqual(none.body, { schemas: [USER], id: ada.id });
  });

  it('excludedAttributes: the default set without them; id and schemas stay', async () => {
    const res = await w.scim('GET', `/Users/${ada.id}?excludedAttributes=emails,name.familyName,id,schemas,meta,unknown`);
    assert.equal(res.status, 200, res.text);
    const { emails, meta, ...rest } = ada;
    assert.equal(emails.length, 1);
    assert.ok(meta);
    assert.deepEqual(res.body, { ...rest, name: { givenName: 'Ada', formatted: 'Ada Lovelace' } });
  });

  it('apply to list pages and to the answers of POST, PUT and PATCH', async () => {
    const list = await w.scim('GET', `/Users?${new URLSearchParams({ filter: 'userName sw "pe-"', attributes: 'userName' })}`);
    assert.deepEqual(
      list.body.Resources.map((r: object) => Object.keys(r).sort()),
      [
        ['id', 'schemas', 'userName'],
        ['id', 'schemas', 'userName'],
        ['id', 'schemas', 'userName'],
      ],
    );
    const created = await w.scim('POST', '/Users?attributes=externalId', { body: userBody('pe-dee', { externalId: 'pe-4' }) });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body, { schemas: [USER], id: created.body.id, externalId: 'pe-4' });
    const put = await w.scim('PUT', `/Users/${created.body.id}?excludedAttributes=meta,emails,name`, { body: userBody('pe-dee', { nickName: 'D' }) });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.nickName, 'D');
    assert.deepEqual(Object.keys(put.body).sort(), ['active', 'displayName', 'id', 'nickName', 'schemas', 'userName']);
    const patched = await w.scim('PATCH', `/Users/${created.body.id}?attributes=active`, {
      body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'nickName', value: 'E' }] },
    });
    assert.deepEqual(patched.body, { schemas: [USER], id: created.body.id, active: true });
  });

  it('a malformed list, both parameters, or one given twice is 400 invalidValue, and a write is not made', async () => {
    for (const query of [
      'attributes=userName,,name',
      'attributes=',
      'attributes=na%20me',
      'attributes=name.givenName.x',
      'attributes=emails%5Btype%20eq%20%22work%22%5D',
      'excludedAttributes=%00',
      `attributes=${'a,'.repeat(101)}a`,
      `attributes=${'a'.repeat(5000)}`,
      'attributes=userName&excludedAttributes=emails',
      'attributes=userName&attributes=emails',
    ]) {
      assertScimError(await w.scim('GET', `/Users/${ada.id}?${query}`), 400, 'invalidValue');
      assertScimError(await w.scim('GET', `/Users?${query}`), 400, 'invalidValue');
    }
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('POST', '/Users?attributes=a..b', { body: userBody('pe-never') }), 400, 'invalidValue');
      assertScimError(await w.patch(`${ada.id}?attributes=%22`, { op: 'replace', path: 'nickName', value: 'X' }), 400, 'invalidValue');
    });
  });
});

describe('POST /Users/.search (RFC 7644 3.4.3)', () => {
  const search = (body: unknown, path = '/Users/.search') => w.scim('POST', path, { body });

  it('answers as GET does, with filter, sort, page and attributes from the body', async () => {
    const res = await search({
      schemas: [SEARCH],
      filter: 'userName sw "pe-" and not (userName eq "pe-etag")',
      sortBy: 'userName',
      sortOrder: 'descending',
      startIndex: 2,
      count: 2,
      attributes: ['userName'],
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.totalResults, 4);
    assert.equal(res.body.startIndex, 2);
    assert.deepEqual(
      res.body.Resources.map((r: { userName: string }) => r.userName),
      ['pe-cy', 'pe-bob'],
    );
    assert.deepEqual(Object.keys(res.body.Resources[0]).sort(), ['id', 'schemas', 'userName']);
    const viaGet = await w.scim('GET', `/Users?${new URLSearchParams({ filter: 'userName sw "pe-"' })}`);
    const viaSearch = await search({ schemas: [SEARCH], filter: 'userName sw "pe-"' });
    assert.deepEqual(viaSearch.body, viaGet.body);
  });

  it('field names in any letter case, attributes as a comma list, and from the root', async () => {
    const res = await search({ SCHEMAS: [SEARCH], Filter: 'externalId eq "pe-1"', excludedattributes: 'emails, meta' }, '/.search');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.totalResults, 1);
    assert.equal(res.body.Resources[0].userName, 'pe-ada');
    assert.equal(res.body.Resources[0].emails, undefined);
    assert.equal(res.body.Resources[0].meta, undefined);
  });

  it('bad bodies are SCIM errors', async () => {
    assertScimError(await search({ filter: 'userName eq "x"' }), 400, 'invalidValue');
    assertScimError(await search({ schemas: [USER] }), 400, 'invalidSyntax');
    assertScimError(await search({ schemas: [SEARCH], where: 'x' }), 400, 'invalidSyntax');
    assertScimError(await search([SEARCH]), 400, 'invalidSyntax');
    assertScimError(await search({ schemas: [SEARCH], filter: 'userName eq' }), 400, 'invalidFilter');
    assertScimError(await search({ schemas: [SEARCH], sortBy: 'favouriteColour' }), 400, 'invalidFilter');
    assertScimError(await search({ schemas: [SEARCH], sortOrder: 'sideways' }), 400, 'invalidValue');
    assertScimError(await search({ schemas: [SEARCH], startIndex: '1' }), 400, 'invalidValue');
    assertScimError(await search({ schemas: [SEARCH], count: 1.5 }), 400, 'invalidValue');
    assertScimError(await search({ schemas: [SEARCH], count: 1e300 }), 400, 'invalidValue');
    assertScimError(await search({ schemas: [SEARCH], attributes: [1] }), 400, 'invalidValue');
    assertScimError(await search({ schemas: [SEARCH], attributes: ['a b'] }), 400, 'invalidValue');
    assertScimError(await search({ schemas: [SEARCH], attributes: ['userName'], excludedAttributes: ['emails'] }), 400, 'invalidValue');
    assertScimError(await search({ schemas: [SEARCH], filter: `userName eq "${'x'.repeat(5000)}"` }), 400, 'invalidValue');
    assertScimError(await w.scim('POST', '/Users/.search', { raw: '{"schemas": [' }), 400, 'invalidSyntax');
    assertScimError(await w.scim('POST', '/Users/.search', { raw: JSON.stringify({ schemas: [SEARCH], filter: 'x'.repeat(1_100_000) }) }), 413);
    assertScimError(await w.scim('GET', '/Users/.search'), 404);
  });
});

describe('ETags (RFC 7644 3.14)', () => {
  it('meta.version is a weak ETag, sent as the ETag header of single answers, and moves with each write', async () => {
    assert.match(ada.meta.version, /^W\/"\d+"$/);
    const res = await get(ada.id, {});
    assert.equal(res.headers.get('etag'), ada.meta.version);
    const patched = await w.patch(ada.id, { op: 'replace', path: 'displayName', value: 'Ada L.' });
    assert.equal(patched.status, 200, patched.text);
    assert.notEqual(patched.body.meta.version, ada.meta.version);
    assert.equal(patched.headers.get('etag'), patched.body.meta.version);
    const again = await w.patch(ada.id, { op: 'replace', path: 'displayName', value: 'Ada L.' });
    assert.equal(again.body.meta.version, patched.body.meta.version, 'a change that changes nothing keeps the version');
    ada = patched.body;
  });

  it('If-None-Match on GET: 304 without a body when it names the version or is *, else the user', async () => {
    for (const header of [ada.meta.version, ada.meta.version.slice(2), `W/"0", ${ada.meta.version}`, '*']) {
      const res = await get(ada.id, { 'if-none-match': header });
      assert.equal(res.status, 304, header);
      assert.equal(res.text, '');
      assert.equal(res.headers.get('etag'), ada.meta.version);
    }
    const changed = await get(ada.id, { 'if-none-match': 'W/"1"' });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.userName, 'pe-ada');
  });

  it('If-Match on PUT, PATCH and DELETE: a stale version is 412 and changes nothing; the current one or * goes through', async () => {
    const target = await w.create('pe-etag');
    const patchBody = { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'nickName', value: 'N' }] };
    await w.assertNothingWritten(async () => {
      for (const [method, body] of [
        ['PATCH', patchBody],
        ['PUT', userBody('pe-etag', { nickName: 'N' })],
        ['DELETE', undefined],
      ] as const) {
        const res = await withHeaders(method, `/Users/${target.id}`, { 'if-match': 'W/"1"' }, body);
        assertScimError(res, 412);
        assert.match(res.body.detail, /version is now W\/"\d+"/);
      }
    });
    const patched = await withHeaders('PATCH', `/Users/${target.id}`, { 'if-match': target.meta.version }, patchBody);
    assert.equal(patched.status, 200, patched.text);
    assertScimError(await withHeaders('PUT', `/Users/${target.id}`, { 'if-match': target.meta.version }, userBody('pe-etag')), 412);
    const put = await withHeaders('PUT', `/Users/${target.id}`, { 'if-match': `"x", ${patched.body.meta.version}` }, userBody('pe-etag'));
    assert.equal(put.status, 200, put.text);
    const removed = await withHeaders('DELETE', `/Users/${target.id}`, { 'if-match': '*' });
    assert.equal(removed.status, 204, removed.text);
    assertScimError(await withHeaders('DELETE', `/Users/${target.id}`, { 'if-match': '*' }), 404);
  });

  it('a malformed If-Match or If-None-Match is 400 invalidValue and changes nothing', async () => {
    await w.assertNothingWritten(async () => {
      for (const header of ['garbage', 'W/42', '"a" "b"', '"a"b', ',', 'W/ "a"', '"a", W/', `${'"a",'.repeat(60)}"a"`]) {
        const res = await withHeaders(
          'PATCH',
          `/Users/${ada.id}`,
          { 'if-match': header },
          {
            schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
            Operations: [{ op: 'replace', path: 'nickName', value: 'never' }],
          },
        );
        assertScimError(res, 400, 'invalidValue');
        assertScimError(await withHeaders('DELETE', `/Users/${ada.id}`, { 'if-match': header }), 400, 'invalidValue');
        const read = await get(ada.id, { 'if-none-match': header });
        assert.equal(read.status, 400, header);
      }
    });
  });
});

describe('POST /Bulk (RFC 7644 3.7)', () => {
  const BULK = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
  const bulk = (Operations: unknown[], extra: Record<string, unknown> = {}) => w.scim('POST', '/Bulk', { body: { schemas: [BULK], Operations, ...extra } });
  const patchOf = (path: string, value: unknown) => ({
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path, value }],
  });

  it('runs the operations in order; a bulkId stands for the user its POST created', async () => {
    const old = await w.create('bk-old');
    const gone = await w.create('bk-gone');
    const res = await bulk([
      { method: 'POST', path: '/Users', bulkId: 'n1', data: userBody('bk-new') },
      { method: 'patch', path: '/Users/bulkId:n1', data: patchOf('nickName', 'Newbie') },
      { method: 'PUT', path: `/Users/${old.id}`, version: old.meta.version, data: userBody('bk-old', { externalId: 'bulkId:n1' }) },
      { method: 'DELETE', path: `/Users/${gone.id}`, version: gone.meta.version },
    ]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.schemas, ['urn:ietf:params:scim:api:messages:2.0:BulkResponse']);
    const [created, patched, put, removed] = res.body.Operations;
    const newId = created.location.split('/').pop();
    assert.deepEqual(created, {
      method: 'POST',
      bulkId: 'n1',
      location: `${w.server.issuer}/scim/v2/${w.orgId}/Users/${newId}`,
      version: created.version,
      status: '201',
    });
    assert.equal(patched.status, '200');
    assert.equal(patched.location, created.location);
    assert.notEqual(patched.version, created.version);
    assert.equal(put.status, '200');
    assert.deepEqual(removed, { method: 'DELETE', status: '204' });
    assert.equal((await w.scim('GET', `/Users/${newId}`)).body.nickName, 'Newbie');
    assert.equal((await w.scim('GET', `/Users/${old.id}`)).body.externalId, newId);
    assertScimError(await w.scim('GET', `/Users/${gone.id}`), 404);
  });

  it('a failed operation carries its error and the others still run; failOnErrors stops after that many', async () => {
    const taken = await w.create('bk-taken');
    const res = await bulk([
      { method: 'POST', path: '/Users', bulkId: 'dup', data: userBody('bk-taken') },
      { method: 'PATCH', path: `/Users/${taken.id}`, version: 'W/"1"', data: patchOf('nickName', 'x') },
      { method: 'PATCH', path: '/Users/bulkId:dup', data: patchOf('nickName', 'x') },
      { method: 'DELETE', path: '/Groups/g1' },
      { method: 'PUT', path: `/Users/${taken.id}`, version: 'garbage', data: userBody('bk-taken') },
      { method: 'POST', path: '/Users', bulkId: 'ok', data: userBody('bk-after') },
    ]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.Operations.map((op: { status: string; response?: { scimType?: string } }) => [op.status, op.response?.scimType]),
      [
        ['409', 'uniqueness'],
        ['412', undefined],
        ['400', 'invalidValue'],
        ['404', undefined],
        ['400', 'invalidValue'],
        ['201', undefined],
      ],
    );
    for (const op of res.body.Operations.slice(0, 5)) assert.equal(op.response.status, op.status);
    assert.equal((await w.scim('GET', `/Users/${taken.id}`)).body.nickName, undefined);

    const stopped = await bulk(
      [
        { method: 'POST', path: '/Users', bulkId: 'a', data: userBody('bk-taken') },
        { method: 'POST', path: '/Users', bulkId: 'b', data: userBody('bk-never') },
      ],
      { failOnErrors: 1 },
    );
    assert.deepEqual(
      stopped.body.Operations.map((op: { status: string }) => op.status),
      ['409'],
    );
    const found = await w.scim('GET', `/Users?${new URLSearchParams({ filter: 'userName eq "bk-never"' })}`);
    assert.equal(found.body.totalResults, 0);
  });

  it('a request that cannot be read as a whole is refused and runs nothing', async () => {
    const post = (bulkId?: string) => ({ method: 'POST', path: '/Users', ...(bulkId ? { bulkId } : {}), data: userBody('bk-refused') });
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('POST', '/Bulk', { body: { Operations: [post('a')] } }), 400, 'invalidValue');
      assertScimError(await w.scim('POST', '/Bulk', { body: { schemas: [USER], Operations: [post('a')] } }), 400, 'invalidSyntax');
      assertScimError(await w.scim('POST', '/Bulk', { body: [post('a')] }), 400, 'invalidSyntax');
      assertScimError(await bulk([post('a')], { extra: 1 }), 400, 'invalidSyntax');
      assertScimError(await bulk([]), 400, 'invalidValue');
      assertScimError(await bulk([post()]), 400, 'invalidValue');
      assertScimError(await bulk([post('a'), post('a')]), 400, 'invalidValue');
      assertScimError(await bulk([post('a'), { method: 'GET', path: '/Users' }]), 400, 'invalidValue');
      assertScimError(await bulk([post('a'), { method: 'PUT', path: '/Users/x' }]), 400, 'invalidValue');
      assertScimError(await bulk([post('a'), { method: 'DELETE', path: '/Users/x', where: 1 }]), 400, 'invalidSyntax');
      assertScimError(await bulk([post('a'), 'DELETE']), 400, 'invalidValue');
      assertScimError(await bulk([post('a')], { failOnErrors: 0 }), 400, 'invalidValue');
      assertScimError(await bulk(Array.from({ length: 101 }, (_, i) => post(`b${i}`))), 413);
      assertScimError(await w.scim('GET', '/Bulk'), 405);
    });
  });
});

describe('discovery and what is not offered', () => {
  it('ServiceProviderConfig announces ETags and Bulk; Groups are 404 errors that say they are not offered', async () => {
    const config = (await w.scim('GET', '/ServiceProviderConfig')).body;
    assert.equal(config.etag.supported, true);
    assert.deepEqual(config.bulk, { supported: true, maxOperations: 100, maxPayloadSize: 1024 * 1024 });
    for (const [method, path] of [
      ['GET', '/Groups'],
      ['GET', `/Groups?${new URLSearchParams({ filter: 'displayName eq "Admins"' })}`],
      ['POST', '/Groups'],
      ['PATCH', '/Groups/some-id'],
    ] as const) {
      const res = await w.scim(method, path, method === 'GET' ? {} : { body: { schemas: [] } });
      assertScimError(res, 404);
      assert.match(res.body.detail, /not offered/);
    }
  });
});
