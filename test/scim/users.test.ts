import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PASSWORD, USER, assertScimError, startScimWorld, userBody, type ScimWorld } from './support.ts';

// SCIM 2.0 (RFC 7644) at /scim/v2/{orgId} (docs/scim.md): discovery, Users
// created and read, and every bad input answered with a SCIM error (RFC
// 7644 3.12), never a 5xx.

let w: ScimWorld;

before(async () => {
  w = await startScimWorld();
});

after(async () => {
  await w?.stop();
});

describe('discovery (RFC 7644 4)', () => {
  it('ServiceProviderConfig: patch, filter with maxResults, sort, ETags, bulk', async () => {
    const res = await w.scim('GET', '/ServiceProviderConfig');
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/scim\+json/);
    assert.equal(res.body.patch.supported, true);
    assert.equal(res.body.bulk.supported, true);
    assert.deepEqual(res.body.filter, { supported: true, maxResults: 200 });
    assert.equal(res.body.sort.supported, true);
    assert.equal(res.body.etag.supported, true);
    assert.equal(res.body.authenticationSchemes[0].type, 'oauthbearertoken');
  });

  it('ResourceTypes offers User only (no Groups); Schemas describes the User attributes kept', async () => {
    const types = await w.scim('GET', '/ResourceTypes');
    assert.deepEqual(
      types.body.Resources.map((r: { id: string }) => r.id),
      ['User'],
    );
    assert.equal((await w.scim('GET', '/ResourceTypes/User')).body.endpoint, '/Users');
    const schemas = await w.scim('GET', '/Schemas');
    assert.equal(schemas.body.totalResults, 1);
    const user = await w.scim('GET', `/Schemas/${USER}`);
    const names = user.body.attributes.map((a: { name: string }) => a.name);
    for (const name of ['userName', 'name', 'emails', 'active', 'externalId']) assert.ok(names.includes(name), name);
    assertScimError(await w.scim('GET', '/Groups'), 404);
  });
});

describe('POST and GET /Users', () => {
  it('creates a human user (201, Location, meta), its event, and it signs in with its password', async () => {
    const res = await w.scim('POST', '/Users', { body: userBody('created', { password: PASSWORD, externalId: 'ext-created', displayName: 'Countess' }) });
    assert.equal(res.status, 201, res.text);
    const user = res.body;
    assert.equal(res.headers.get('location'), `${w.server.issuer}/scim/v2/${w.orgId}/Users/${user.id}`);
    assert.deepEqual(user.schemas, [USER]);
    assert.equal(user.userName, 'created');
    assert.equal(user.externalId, 'ext-created');
    assert.equal(user.displayName, 'Countess');
    assert.deepEqual(user.name, { givenName: 'Ada', familyName: 'Lovelace', formatted: 'Ada Lovelace' });
    assert.deepEqual(user.emails, [{ value: 'created@example.com', type: 'work', primary: true }]);
    assert.equal(user.active, true);
    assert.equal(user.password, undefined, 'a password is never returned');
    assert.equal(user.meta.resourceType, 'User');
    assert.equal(user.meta.location, res.headers.get('location'));
    assert.deepEqual(await w.eventTypesOf(user.id), ['user.human.added', 'user.external_id.changed']);
    assert.deepEqual((await w.scim('GET', `/Users/${user.id}`)).body, user);
    const mgmt = await w.server.api('GET', `/management/v1/users/${user.id}`);
    assert.equal(mgmt.body.user.human.email.isEmailVerified, true);
    assert.ok(await w.signsIn('created'));
  });

  it('takes application/json too, attribute names in any letter case, attributes under the schema URI, and passes over ones it does not keep', async () => {
    const body = {
      schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      USERNAME: 'cased',
      Name: { GivenName: 'C', familyName: 'Ased', middleName: 'x' },
      [USER]: { displayName: 'Under the URI' },
      emails: [{ Value: 'cased@example.com', Primary: true }],
      title: 'Engineer',
      phoneNumbers: [{ value: '+41 79 000 00 00', type: 'work' }],
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { employeeNumber: '7' },
    };
    const res = await w.scim('POST', '/Users', { body, contentType: 'application/json' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.userName, 'cased');
    assert.equal(res.body.displayName, 'Under the URI');
    assert.equal(res.body.name.givenName, 'C');
    assert.equal(res.body.title, undefined);
  });

  it('creates a user with active false deactivated: it cannot sign in', async () => {
    const user = await w.create('born-inactive', { active: false, password: PASSWORD });
    assert.equal(user.active, false);
    assert.deepEqual(await w.eventTypesOf(user.id), ['user.human.added', 'user.deactivated']);
    assert.equal(await w.signsIn('born-inactive'), false);
  });

  it('keeps the primary of several emails; refuses two primaries and several without one (400 invalidValue)', async () => {
    const emails = [
      { value: 'home@example.com', type: 'home' },
      { value: 'main@example.com', type: 'other', primary: true },
    ];
    assert.deepEqual((await w.create('two-mails', { emails })).emails, [{ value: 'main@example.com', type: 'work', primary: true }]);
    await w.assertNothingWritten(async () => {
      const two = emails.map((e) => ({ ...e, primary: true }));
      assertScimError(await w.scim('POST', '/Users', { body: userBody('x1', { emails: two }) }), 400, 'invalidValue');
      const none = emails.map((e) => ({ value: e.value, type: 'home' }));
      assertScimError(await w.scim('POST', '/Users', { body: userBody('x2', { emails: none }) }), 400, 'invalidValue');
    });
  });

  it('a userName taken in any letter case, or an externalId taken, is 409 uniqueness; nothing is written', async () => {
    await w.create('unique-one', { externalId: 'ext-unique' });
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('POST', '/Users', { body: userBody('UNIQUE-one') }), 409, 'uniqueness');
      assertScimError(await w.scim('POST', '/Users', { body: userBody('unique-two', { externalId: 'ext-unique' }) }), 409, 'uniqueness');
    });
    // externalId is caseExact (RFC 7643 3.1): another letter case is another id.
    await w.create('unique-three', { externalId: 'EXT-UNIQUE' });
  });

  it('GET of an unknown user, a machine user or a user of another org is 404', async () => {
    assertScimError(await w.scim('GET', '/Users/unknown'), 404);
    assertScimError(await w.scim('GET', '/Users/%00'), 404);
    assertScimError(await w.scim('GET', `/Users/${'9'.repeat(300)}`), 404);
    const { rows } = await w.server.running.db.query<{ id: string; org_id: string }>(
      "SELECT id, org_id FROM users WHERE user_name IN ('scim-client', 'other') ORDER BY user_name",
    );
    for (const row of rows) assertScimError(await w.scim('GET', `/Users/${row.id}`), 404);
  });
});

describe('who may call', () => {
  it('no token or an unknown one is 401 with a Bearer challenge', async () => {
    for (const token of [null, 'not-a-token']) {
      const res = await w.scim('GET', '/Users', { token });
      assertScimError(res, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
  });

  it("a token of another org's owner is 403 here and works in its own org; a token without the roles is 403", async () => {
    const user = await w.create('cross-org-target');
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('GET', '/Users', { token: w.otherOrgPat }), 403);
      assertScimError(await w.scim('GET', `/Users/${user.id}`, { token: w.otherOrgPat }), 403);
      assertScimError(await w.scim('POST', '/Users', { token: w.otherOrgPat, body: userBody('intruder') }), 403);
      assertScimError(await w.scim('DELETE', `/Users/${user.id}`, { token: w.otherOrgPat }), 403);
      assertScimError(await w.scim('GET', '/ServiceProviderConfig', { token: w.otherOrgPat }), 403);
      assertScimError(await w.scim('GET', '/Users', { token: w.nobodyPat }), 403);
      assertScimError(await w.scim('POST', '/Users', { token: w.nobodyPat, body: userBody('intruder') }), 403);
    });
    const own = await w.scim('GET', '/Users', { token: w.otherOrgPat, org: w.otherOrgId });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(
      own.body.Resources.map((r: { userName: string }) => r.userName),
      ['other'],
    );
  });

  it('an org that does not exist is 404 (for IAM_OWNER) and 403 for an org manager', async () => {
    assertScimError(await w.scim('GET', '/Users', { org: 'no-such-org', token: w.server.pat }), 404);
    assertScimError(await w.scim('GET', '/Users', { org: 'no-such-org' }), 403);
    assertScimError(await w.scim('GET', '/Users', { org: '%00', token: w.server.pat }), 404);
  });
});

describe('DELETE /Users/{id}', () => {
  it('removes the user (204, user.removed); it is not found afterwards and cannot sign in', async () => {
    const user = await w.create('to-remove', { password: PASSWORD });
    const res = await w.scim('DELETE', `/Users/${user.id}`);
    assert.equal(res.status, 204, res.text);
    assert.equal((await w.eventTypesOf(user.id)).at(-1), 'user.removed');
    assertScimError(await w.scim('GET', `/Users/${user.id}`), 404);
    assertScimError(await w.scim('DELETE', `/Users/${user.id}`), 404);
    assert.equal(await w.signsIn('to-remove'), false);
  });

  it('an ORG_USER_MANAGER cannot remove an ORG_OWNER (403, every role of the target)', async () => {
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('DELETE', `/Users/${w.ownerId}`), 403);
    });
  });
});

describe('bad inputs: SCIM errors, never a 5xx, nothing written', () => {
  it('malformed JSON, a wrong content type, no body, a body that is no object: 400 invalidSyntax', async () => {
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('POST', '/Users', { raw: '{"schemas": [' }), 400, 'invalidSyntax');
      assertScimError(await w.scim('POST', '/Users', { raw: '{"a":1}{"b":2}' }), 400, 'invalidSyntax');
      assertScimError(await w.scim('POST', '/Users', { raw: JSON.stringify(userBody('typed')), contentType: 'text/plain' }), 400, 'invalidSyntax');
      assertScimError(
        await w.scim('POST', '/Users', { raw: JSON.stringify(userBody('form')), contentType: 'application/x-www-form-urlencoded' }),
        400,
        'invalidSyntax',
      );
      assertScimError(await w.scim('POST', '/Users'), 400, 'invalidSyntax');
      assertScimError(await w.scim('POST', '/Users', { body: [userBody('array')] }), 400, 'invalidSyntax');
      assertScimError(await w.scim('POST', '/Users', { body: 'a string' }), 400, 'invalidSyntax');
    });
  });

  it('an oversized body is 413; a body nesting deeper than 32 levels is 400 invalidSyntax', async () => {
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('POST', '/Users', { body: userBody('huge', { displayName: 'x'.repeat(1024 * 1024 + 10) }) }), 413);
      let deep: unknown = 'x';
      for (let i = 0; i < 40; i++) deep = { a: deep };
      assertScimError(await w.scim('POST', '/Users', { body: userBody('deep', { [USER]: deep }) }), 400, 'invalidSyntax');
    });
  });

  it('NUL characters and lone surrogates anywhere in the body are 400 invalidValue', async () => {
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('POST', '/Users', { body: userBody('nul\u0000name') }), 400, 'invalidValue');
      assertScimError(
        await w.scim('POST', '/Users', { body: userBody('nul-in-name', { name: { givenName: 'A\u0000', familyName: 'B' } }) }),
        400,
        'invalidValue',
      );
      assertScimError(
        await w.scim('POST', '/Users', { raw: JSON.stringify(userBody('surrogate')).replace('surrogate"', 'surrogate\\ud800"') }),
        400,
        'invalidValue',
      );
    });
  });

  it('unknown attributes, a body without the User schema, wrong types and missing attributes are 400', async () => {
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('POST', '/Users', { body: userBody('unknown', { favouriteColour: 'green' }) }), 400, 'invalidSyntax');
      assertScimError(
        await w.scim('POST', '/Users', { body: userBody('unknown', { name: { givenName: 'A', familyName: 'B', shoeSize: 9 } }) }),
        400,
        'invalidSyntax',
      );
      assertScimError(await w.scim('POST', '/Users', { body: userBody('unlisted', { 'urn:example:ext': { a: 1 } }) }), 400, 'invalidSyntax');
      assertScimError(await w.scim('POST', '/Users', { body: { ...userBody('no-schemas'), schemas: undefined } }), 400, 'invalidSyntax');
      assertScimError(await w.scim('POST', '/Users', { body: userBody('typed', { active: 'maybe' }) }), 400, 'invalidValue');
      assertScimError(await w.scim('POST', '/Users', { body: { ...userBody('x'), userName: 5 } }), 400, 'invalidValue');
      assertScimError(await w.scim('POST', '/Users', { body: { ...userBody('x'), userName: 'has space' } }), 400, 'invalidValue');
      assertScimError(await w.scim('POST', '/Users', { body: { ...userBody('no-mail'), emails: [] } }), 400, 'invalidValue');
      assertScimError(await w.scim('POST', '/Users', { body: { ...userBody('bad-mail'), emails: [{ value: 'not an address' }] } }), 400, 'invalidValue');
      assertScimError(await w.scim('POST', '/Users', { body: { ...userBody('no-name'), name: { givenName: 'A' } } }), 400, 'invalidValue');
      assertScimError(await w.scim('POST', '/Users', { body: userBody('x'.repeat(201)) }), 400, 'invalidValue');
      assertScimError(await w.scim('POST', '/Users', { body: userBody('weak', { password: 'short' }) }), 400, 'invalidValue');
    });
  });

  it('query parameters given twice or of the wrong shape are 400 invalidValue; another method is 405', async () => {
    assertScimError(await w.scim('GET', '/Users?count=1&count=2'), 400, 'invalidValue');
    assertScimError(await w.scim('GET', '/Users?filter=userName%20pr&filter=active%20pr'), 400, 'invalidValue');
    assertScimError(await w.scim('GET', '/Users?startIndex=abc'), 400, 'invalidValue');
    assertScimError(await w.scim('GET', '/Users?count=1.5'), 400, 'invalidValue');
    assertScimError(await w.scim('GET', '/Users?sortOrder=sideways'), 400, 'invalidValue');
    assertScimError(await w.scim('GET', '/Users?sortBy=%22x%22'), 400, 'invalidValue');
    assertScimError(await w.scim('PUT', '/Users', { body: userBody('x') }), 405);
    assertScimError(await w.scim('DELETE', '/Users'), 405);
  });
});
