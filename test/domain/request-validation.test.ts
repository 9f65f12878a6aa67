import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validator } from '../../src/admin/validate.ts';
import { setupOrgSchema } from '../../src/admin/schemas.ts';
import { InvalidArgument } from '../../src/domain/errors.ts';

function violationsOf(check: (body: unknown) => unknown, body: unknown): Array<{ field: string; description: string }> {
  try {
    check(body);
  } catch (err) {
    assert.ok(err instanceof InvalidArgument, String(err));
    return err.violations;
  }
  assert.fail('expected the body to be rejected');
}

const fields = (check: (body: unknown) => unknown, body: unknown) =>
  violationsOf(check, body)
    .map((v) => v.field)
    .sort();

describe('request validation: field paths of violations', () => {
  const checkSetup = validator(setupOrgSchema);
  const valid = () => ({
    org: { name: 'ACME' },
    human: { userName: 'alice', profile: { firstName: 'Alice', lastName: 'Doe' }, email: { email: 'alice@example.com' } },
  });

  it('returns a valid body unchanged', () => {
    const body = valid();
    assert.equal(checkSetup(body), body);
  });

  it('names nested fields with dots', () => {
    const body = valid();
    body.human.profile.firstName = '';
    assert.deepEqual(fields(checkSetup, body), ['human.profile.firstName']);
  });

  it('names array items with [index]', () => {
    assert.deepEqual(fields(checkSetup, { ...valid(), roles: ['ORG_OWNER', 7, ''] }), ['roles[1]', 'roles[2]']);
  });

  it('names a missing field by its full path', () => {
    const body: any = valid();
    delete body.human.email;
    delete body.org.name;
    assert.deepEqual(fields(checkSetup, body), ['human.email', 'org.name']);
  });

  it('names an unknown field by its full path, at the top and nested', () => {
    const body: any = { ...valid(), extra: 1 };
    body.human.profile.middle = 'M';
    assert.deepEqual(fields(checkSetup, body), ['extra', 'human.profile.middle']);
  });

  it('names a body that is no object as (body)', () => {
    assert.deepEqual(fields(checkSetup, []), ['(body)']);
    assert.deepEqual(fields(checkSetup, 'x'), ['(body)']);
  });

  it('reports every bad field once, each with a description', () => {
    const body: any = valid();
    body.org.name = 'n'.repeat(201);
    body.human.userName = 'has space';
    body.human.email.email = 'nope';
    const violations = violationsOf(checkSetup, body);
    assert.deepEqual(violations.map((v) => v.field).sort(), ['human.email.email', 'human.userName', 'org.name']);
    for (const v of violations) assert.ok(v.description.length > 0);
    assert.match(violations.find((v) => v.field === 'org.name')!.description, /200/);
  });

  it('names items of arrays of objects as items[i].field', () => {
    const check = validator({
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] } } },
    });
    assert.deepEqual(fields(check, { items: [{ name: 'a' }, {}, { name: '' }] }), ['items[1].name', 'items[2].name']);
  });
});
