import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { displayNameOf, loginName, GENDERS } from '../../src/domain/users.ts';
import { newId } from '../../src/domain/ids.ts';
import { isOrgRole, isInstanceRole, mayActInOrg, hasInstanceRole, type Principal } from '../../src/domain/roles.ts';

describe('display name', () => {
  it('is the given display name when one is set', () => {
    assert.equal(displayNameOf({ firstName: 'Alice', lastName: 'Doe', displayName: 'Ali D.' }), 'Ali D.');
  });

  it('is "firstName lastName" when none is set, or it is blank', () => {
    assert.equal(displayNameOf({ firstName: 'Alice', lastName: 'Doe' }), 'Alice Doe');
    assert.equal(displayNameOf({ firstName: 'Alice', lastName: 'Doe', displayName: '' }), 'Alice Doe');
    assert.equal(displayNameOf({ firstName: 'Alice', lastName: 'Doe', displayName: '   ' }), 'Alice Doe');
  });
});

describe('login name', () => {
  it('is userName@primaryDomain', () => {
    assert.equal(loginName('alice', 'acme.example.com'), 'alice@acme.example.com');
    assert.equal(loginName('admin', 'default.example.test'), 'admin@default.example.test');
  });
});

describe('genders', () => {
  it('are exactly the four of docs/api/users.md', () => {
    assert.deepEqual([...GENDERS], ['GENDER_UNSPECIFIED', 'GENDER_FEMALE', 'GENDER_MALE', 'GENDER_DIVERSE']);
  });
});

describe('object ids', () => {
  it('are 18 decimal digits that sort by creation time', () => {
    const early = newId(1_700_000_000_000);
    const late = newId(1_700_000_000_001);
    assert.match(early, /^\d{18}$/);
    assert.match(newId(), /^\d{18}$/);
    assert.ok(early < late);
  });
});

describe('roles', () => {
  const principal = (instance: string[], orgs: Record<string, string[]>): Principal => ({
    userId: 'u',
    orgId: 'o1',
    instanceRoles: new Set(instance),
    orgRoles: new Map(Object.entries(orgs).map(([org, roles]) => [org, new Set(roles)])),
  });

  it('org roles and instance roles are disjoint lists', () => {
    assert.ok(isOrgRole('ORG_OWNER') && isOrgRole('ORG_USER_MANAGER') && isOrgRole('ORG_END_USER_IMPERSONATOR'));
    assert.ok(!isOrgRole('IAM_OWNER') && !isOrgRole('org_owner') && !isOrgRole(''));
    assert.ok(isInstanceRole('IAM_OWNER') && isInstanceRole('IAM_END_USER_IMPERSONATOR') && !isInstanceRole('ORG_OWNER'));
  });

  it('an instance owner may act in every org; others only where they hold one of the roles', () => {
    assert.ok(mayActInOrg(principal(['IAM_OWNER'], {}), 'any', 'ORG_OWNER'));
    assert.ok(hasInstanceRole(principal(['IAM_OWNER'], {}), 'IAM_OWNER'));
    const owner = principal([], { o1: ['ORG_OWNER'] });
    assert.ok(mayActInOrg(owner, 'o1', 'ORG_OWNER', 'ORG_USER_MANAGER'));
    assert.ok(!mayActInOrg(owner, 'o2', 'ORG_OWNER'));
    assert.ok(!mayActInOrg(owner, 'o1', 'ORG_USER_MANAGER'));
    assert.ok(!hasInstanceRole(owner, 'IAM_OWNER'));
    assert.ok(!mayActInOrg(principal(['IAM_END_USER_IMPERSONATOR'], {}), 'o1', 'ORG_OWNER'));
  });
});
