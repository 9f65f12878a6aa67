import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { namesOfList, project, projectionOf } from '../../src/domain/scim/projection.ts';
import { etagOf, tagCondition } from '../../src/domain/scim/etag.ts';
import { ScimInvalid } from '../../src/domain/scim/errors.ts';
import { USER_SCHEMA, userResponse } from '../../src/domain/scim/user.ts';

// The pieces of RFC 7644 3.9 and 3.14 that need no server: which
// attributes a projection leaves, and how If-Match / If-None-Match
// headers read. Whatever the input, they refuse with ScimInvalid only.

const user = userResponse(
  {
    id: 'u1',
    userName: 'ada',
    externalId: 'x1',
    givenName: 'Ada',
    familyName: 'Lovelace',
    displayName: 'Ada Lovelace',
    nickName: null,
    preferredLanguage: 'en',
    email: 'ada@example.com',
    active: true,
    created: new Date(0),
    lastModified: new Date(0),
    version: '42',
  },
  'https://id.example.com/scim/v2/o/Users/u1',
);

const shown = (attributes?: string, excluded?: string) =>
  project(
    user,
    projectionOf(
      attributes === undefined ? undefined : namesOfList('attributes', attributes),
      excluded === undefined ? undefined : namesOfList('excludedAttributes', excluded),
    ),
  );

describe('projections (RFC 7644 3.9)', () => {
  it('a whole attribute wins over its sub-attributes; sub-attributes of multi-valued ones apply to each value', () => {
    assert.deepEqual(shown('name.givenName,NAME,emails.type,emails.primary'), {
      schemas: [USER_SCHEMA],
      id: 'u1',
      name: user.name,
      emails: [{ type: 'work', primary: true }],
    });
    assert.deepEqual(shown('meta.version,meta.resourceType'), { schemas: [USER_SCHEMA], id: 'u1', meta: { resourceType: 'User', version: 'W/"42"' } });
    assert.deepEqual(Object.keys(shown(undefined, 'emails.value,emails.type,emails.primary,name.givenName,name.familyName,name.formatted')).sort(), [
      'active',
      'displayName',
      'externalId',
      'id',
      'meta',
      'preferredLanguage',
      'schemas',
      'userName',
    ]);
    assert.equal(project(user, undefined), user);
  });

  it('any lists: ScimInvalid or an answer that keeps id and schemas and adds nothing', () => {
    const names = fc.array(
      fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('userName', 'name.givenName', 'emails.value', `${USER_SCHEMA}:active`, 'meta', 'id')),
      {
        maxLength: 6,
      },
    );
    fc.assert(
      fc.property(names, fc.boolean(), (list, include) => {
        let answer: Record<string, unknown>;
        try {
          answer = project(user, include ? projectionOf(list, undefined) : projectionOf(undefined, list));
        } catch (err) {
          assert.ok(err instanceof ScimInvalid, String(err));
          return;
        }
        assert.equal(answer.id, 'u1');
        assert.deepEqual(answer.schemas, [USER_SCHEMA]);
        for (const key of Object.keys(answer)) assert.ok(key in user, key);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('If-Match and If-None-Match (RFC 7644 3.14, RFC 9110 13.1)', () => {
  it('reads lists of weak and strong tags, commas inside tags, empty elements and *', () => {
    const meets = (header: string, version = '42') => tagCondition(header, 'If-Match')(version);
    assert.equal(etagOf('42'), 'W/"42"');
    assert.ok(meets('W/"42"'));
    assert.ok(meets('"42"'));
    assert.ok(meets(' "1" ,, W/"42" ,'));
    assert.ok(meets('"a,b", "42"'));
    assert.ok(meets('*'));
    assert.ok(meets('"\u00e9"', '\u00e9'));
    assert.equal(meets('"4"'), false);
  });

  it('any header: ScimInvalid, or a condition', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 30 }), fc.constant('"a"'.repeat(3000))), (header) => {
        try {
          tagCondition(header, 'If-None-Match');
        } catch (err) {
          assert.ok(err instanceof ScimInvalid, String(err));
        }
      }),
      { numRuns: 2000 },
    );
    for (const header of ['', ' ', ',', 'W/', '"a', 'a"', '"a" b', 'W/ "a"', `${'"a",'.repeat(51)}`]) {
      assert.throws(() => tagCondition(header, 'If-Match'), ScimInvalid, header);
    }
  });
});
