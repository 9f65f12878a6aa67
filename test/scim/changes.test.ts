import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LOGIN_FORM_REDIRECT } from '../support/login-form.ts';
import { runCodeFlow } from '../support/code-flow.ts';
import { PASSWORD, USER, assertScimError, startScimWorld, userBody, type ScimWorld } from './support.ts';

// PUT and PATCH of /Users/{id} (RFC 7644 3.5): every PATCH form (add,
// replace, remove; with a path, a value-filter path, or none), each change
// with the management API's event, all or nothing; `active: false` ending
// sign-in and tokens, `true` restoring sign-in; the every-role rule.

let w: ScimWorld;

before(async () => {
  w = await startScimWorld();
});

after(async () => {
  await w?.stop();
});

async function get(id: string): Promise<any> {
  const res = await w.scim('GET', `/Users/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

function ok(res: { status: number; text: string; body: any }): any {
  assert.equal(res.status, 200, res.text);
  return res.body;
}

describe('PUT /Users/{id}', () => {
  it('replaces the user: names, email, displayName; externalId removed when left out; one event per part changed', async () => {
    const user = await w.create('put-me', { externalId: 'ext-put', nickName: 'nick' });
    const body = userBody('put-me-renamed', {
      name: { givenName: 'Grace', familyName: 'Hopper' },
      emails: [{ value: 'grace@example.com', primary: true }],
      displayName: 'Admiral',
    });
    const put = ok(await w.scim('PUT', `/Users/${user.id}`, { body }));
    assert.equal(put.userName, 'put-me-renamed');
    assert.deepEqual(put.name, { givenName: 'Grace', familyName: 'Hopper', formatted: 'Grace Hopper' });
    assert.equal(put.displayName, 'Admiral');
    assert.equal(put.nickName, undefined);
    assert.equal(put.externalId, undefined);
    assert.deepEqual(put.emails, [{ value: 'grace@example.com', type: 'work', primary: true }]);
    assert.deepEqual(await get(user.id), put);
    assert.deepEqual((await w.eventTypesOf(user.id)).slice(2), [
      'user.username.changed',
      'user.external_id.changed',
      'user.human.profile.changed',
      'user.human.email.changed',
    ]);
  });

  it('the same body again changes nothing and writes no event', async () => {
    const user = await w.create('put-same');
    const { id, meta, ...same } = user;
    await w.assertNothingWritten(async () => {
      ok(await w.scim('PUT', `/Users/${user.id}`, { body: { ...same, id: 'ignored', meta: { resourceType: 'ignored' } } }));
    });
  });

  it('refuses a taken userName (409 uniqueness), a password (400) and an unknown user (404); nothing written', async () => {
    const user = await w.create('put-refused');
    await w.create('put-taken');
    await w.assertNothingWritten(async () => {
      assertScimError(await w.scim('PUT', `/Users/${user.id}`, { body: userBody('PUT-TAKEN') }), 409, 'uniqueness');
      assertScimError(await w.scim('PUT', `/Users/${user.id}`, { body: userBody('put-refused', { password: PASSWORD }) }), 400, 'invalidValue');
      assertScimError(await w.scim('PUT', '/Users/unknown', { body: userBody('whoever') }), 404);
      assertScimError(await w.scim('PUT', `/Users/${user.id}`, { raw: '{"userName":' }), 400, 'invalidSyntax');
    });
  });
});

describe('PATCH /Users/{id} (RFC 7644 3.5.2)', () => {
  it('replace with a path, on a simple attribute and on a sub-attribute', async () => {
    const user = await w.create('patch-simple');
    const after = ok(
      await w.patch(user.id, { op: 'replace', path: 'displayName', value: 'Shown' }, { op: 'replace', path: 'name.familyName', value: 'Byron' }),
    );
    assert.equal(after.displayName, 'Shown');
    assert.equal(after.name.familyName, 'Byron');
    assert.deepEqual(await get(user.id), after);
    assert.deepEqual((await w.eventTypesOf(user.id)).slice(1), ['user.human.profile.changed']);
  });

  it('replace without a path, with capitalised op names and dotted keys (as Entra ID sends them)', async () => {
    const user = await w.create('patch-nopath');
    const after = ok(await w.patch(user.id, { op: 'Replace', value: { 'name.givenName': 'Augusta', nickName: 'Ada', externalId: 'ext-np' } }));
    assert.equal(after.name.givenName, 'Augusta');
    assert.equal(after.nickName, 'Ada');
    assert.equal(after.externalId, 'ext-np');
  });

  it('add and remove of a simple attribute; remove of externalId', async () => {
    const user = await w.create('patch-add-remove', { externalId: 'ext-ar' });
    assert.equal(ok(await w.patch(user.id, { op: 'add', path: 'nickName', value: 'Nick' })).nickName, 'Nick');
    const removed = ok(await w.patch(user.id, { op: 'remove', path: 'nickName' }, { op: 'remove', path: 'externalId' }));
    assert.equal(removed.nickName, undefined);
    assert.equal(removed.externalId, undefined);
  });

  it('replace of the complex name merges its sub-attributes', async () => {
    const user = await w.create('patch-complex');
    const after = ok(await w.patch(user.id, { op: 'replace', path: 'name', value: { familyName: 'King' } }));
    assert.deepEqual(after.name, { givenName: 'Ada', familyName: 'King', formatted: 'Ada King' });
  });

  it('value-filter paths: replace and add emails[type eq "work"].value, replace a matched value, remove with a filter', async () => {
    const user = await w.create('patch-filter');
    const replaced = ok(await w.patch(user.id, { op: 'replace', path: 'emails[type eq "work"].value', value: 'new@example.com' }));
    assert.deepEqual(replaced.emails, [{ value: 'new@example.com', type: 'work', primary: true }]);
    const added = ok(await w.patch(user.id, { op: 'Add', path: 'emails[type eq "work"].value', value: 'added@example.com' }));
    assert.equal(added.emails[0].value, 'added@example.com');
    const whole = ok(
      await w.patch(user.id, { op: 'replace', path: 'emails[value eq "ADDED@example.com"]', value: { value: 'whole@example.com', primary: true } }),
    );
    assert.equal(whole.emails[0].value, 'whole@example.com');
    assert.deepEqual((await w.eventTypesOf(user.id)).slice(1), ['user.human.email.changed', 'user.human.email.changed', 'user.human.email.changed']);
    // Removing the only email leaves a user without one: refused as a whole.
    await w.assertNothingWritten(async () => {
      assertScimError(await w.patch(user.id, { op: 'remove', path: 'emails[type eq "work"]' }), 400, 'invalidValue');
      assertScimError(await w.patch(user.id, { op: 'remove', path: 'emails' }), 400, 'invalidValue');
    });
    // A remove whose filter matches nothing changes nothing.
    await w.assertNothingWritten(async () => {
      ok(await w.patch(user.id, { op: 'remove', path: 'emails[type eq "home"]' }));
    });
  });

  it('add of emails without a path appends: the new primary is kept; replace of emails replaces them', async () => {
    const user = await w.create('patch-emails');
    const appended = await w.patch(user.id, { op: 'add', path: 'emails', value: [{ value: 'second@example.com', type: 'home' }] });
    // Two emails, one primary: the primary one stays.
    assert.equal(ok(appended).emails[0].value, 'patch-emails@example.com');
    const replaced = ok(await w.patch(user.id, { op: 'replace', path: 'emails', value: [{ value: 'only@example.com' }] }));
    assert.deepEqual(replaced.emails, [{ value: 'only@example.com', type: 'work', primary: true }]);
  });

  it('attributes the service does not keep (title, an extension) are passed over', async () => {
    const user = await w.create('patch-ignored');
    await w.assertNothingWritten(async () => {
      ok(
        await w.patch(
          user.id,
          { op: 'replace', path: 'title', value: 'Engineer' },
          { op: 'add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'R&D' },
          { op: 'replace', path: 'name.middleName', value: 'M' },
        ),
      );
    });
  });

  it('refusals: noTarget, mutability, invalidPath, invalidFilter, invalidSyntax, invalidValue, uniqueness — and nothing of the request is written', async () => {
    const user = await w.create('patch-refused');
    await w.create('patch-taken');
    const patch = (...operations: unknown[]) => w.patch(user.id, ...operations);
    const displayName = { op: 'replace', path: 'displayName', value: 'Changed first' };
    await w.assertNothingWritten(async () => {
      assertScimError(await patch(displayName, { op: 'replace', path: 'emails[type eq "home"].value', value: 'x@example.com' }), 400, 'noTarget');
      assertScimError(await patch({ op: 'remove' }), 400, 'noTarget');
      assertScimError(await patch(displayName, { op: 'replace', path: 'id', value: 'x' }), 400, 'mutability');
      assertScimError(await patch({ op: 'replace', path: 'meta.created', value: 'x' }), 400, 'mutability');
      assertScimError(await patch({ op: 'replace', path: 'favouriteColour', value: 'x' }), 400, 'invalidPath');
      assertScimError(await patch({ op: 'replace', path: 'name.shoeSize', value: 9 }), 400, 'invalidPath');
      assertScimError(await patch({ op: 'replace', path: 'userName[value pr]', value: 'x' }), 400, 'invalidPath');
      assertScimError(await patch({ op: 'replace', path: '', value: 'x' }), 400, 'invalidPath');
      assertScimError(await patch({ op: 'replace', path: 'emails[type eq]', value: 'x' }), 400, 'invalidFilter');
      assertScimError(await patch({ op: 'move', path: 'displayName', value: 'x' }), 400, 'invalidSyntax');
      assertScimError(await patch({ op: 'replace', path: 'displayName', value: 'x', extra: 1 }), 400, 'invalidSyntax');
      assertScimError(await patch({ op: 'replace', path: 'displayName' }), 400, 'invalidValue');
      assertScimError(await patch(displayName, { op: 'replace', path: 'userName', value: 'has space' }), 400, 'invalidValue');
      assertScimError(await patch(displayName, { op: 'replace', path: 'userName', value: 'PATCH-TAKEN' }), 409, 'uniqueness');
      assertScimError(await patch({ op: 'replace', path: 'password', value: PASSWORD }), 400, 'invalidValue');
      assertScimError(await patch({ op: 'replace', value: 'not an object' }), 400, 'invalidValue');
      assertScimError(await w.scim('PATCH', `/Users/${user.id}`, { body: { Operations: [displayName] } }), 400, 'invalidSyntax');
      assertScimError(await w.scim('PATCH', `/Users/${user.id}`, { body: { schemas: [USER], Operations: [displayName] } }), 400, 'invalidSyntax');
      assertScimError(
        await w.scim('PATCH', `/Users/${user.id}`, {
          body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: Array.from({ length: 101 }, () => displayName) },
        }),
        400,
        'invalidSyntax',
      );
      assertScimError(await w.patch('unknown', displayName), 404);
    });
  });
});

describe('active: false deactivates, true reactivates (tokens end with the user)', () => {
  it('PATCH active "False" (Entra ID) stops sign-in and ends the user\'s tokens; PATCH active true restores sign-in', async () => {
    const user = await w.create('deactivated', { password: PASSWORD });
    const tokens = await runCodeFlow(
      { baseUrl: w.server.url, clientId: w.app.clientId, clientSecret: w.app.clientSecret, redirectUri: LOGIN_FORM_REDIRECT, scope: 'openid' },
      { loginName: `deactivated@${w.domain}`, password: PASSWORD },
    );
    assert.equal((await w.introspect(tokens.access_token)).active, true);
    const off = ok(await w.patch(user.id, { op: 'Replace', path: 'active', value: 'False' }));
    assert.equal(off.active, false);
    assert.equal((await w.introspect(tokens.access_token)).active, false);
    assert.equal(await w.signsIn('deactivated'), false);
    const mgmt = await w.server.api('GET', `/management/v1/users/${user.id}`);
    assert.equal(mgmt.body.user.state, 'USER_STATE_INACTIVE');
    const on = ok(await w.patch(user.id, { op: 'replace', value: { active: true } }));
    assert.equal(on.active, true);
    assert.equal(await w.signsIn('deactivated'), true);
    assert.deepEqual((await w.eventTypesOf(user.id)).slice(-2), ['user.deactivated', 'user.reactivated']);
  });

  it('PUT with active false deactivates too', async () => {
    const user = await w.create('put-inactive', { password: PASSWORD });
    const { id, meta, ...body } = user;
    assert.equal(ok(await w.scim('PUT', `/Users/${user.id}`, { body: { ...body, active: false } })).active, false);
    assert.equal(await w.signsIn('put-inactive'), false);
  });

  it('an ORG_USER_MANAGER may rename an ORG_OWNER but not deactivate it, nor change its userName or email (403, every role)', async () => {
    const renamed = ok(await w.patch(w.ownerId, { op: 'replace', path: 'displayName', value: 'The Owner' }));
    assert.equal(renamed.displayName, 'The Owner');
    await w.assertNothingWritten(async () => {
      assertScimError(await w.patch(w.ownerId, { op: 'replace', path: 'active', value: false }), 403);
      assertScimError(await w.patch(w.ownerId, { op: 'replace', path: 'userName', value: 'taken-over' }), 403);
      assertScimError(await w.patch(w.ownerId, { op: 'replace', path: 'emails[type eq "work"].value', value: 'attacker@example.com' }), 403);
    });
    assert.equal(await w.signsIn('the-owner'), true);
    // The instance owner holds every role.
    const body = { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] };
    assert.equal(ok(await w.scim('PATCH', `/Users/${w.ownerId}`, { body, token: w.server.pat })).active, false);
    assert.equal(await w.signsIn('the-owner'), false);
  });
});
