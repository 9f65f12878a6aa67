import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeFilterValue, ldapServerProblem, searchBaseOf, userSearchFilter } from '../../src/domain/ldap.ts';

// docs/idps.md, LDAP: the search a sign-in sends and the addresses a provider may name.

describe('LDAP search filters (RFC 4515)', () => {
  it('escapes *, (, ), \\ and NUL in a typed name as \\XX, and nothing else', () => {
    assert.equal(escapeFilterValue('*'), '\\2a');
    assert.equal(escapeFilterValue('('), '\\28');
    assert.equal(escapeFilterValue(')'), '\\29');
    assert.equal(escapeFilterValue('\\'), '\\5c');
    assert.equal(escapeFilterValue('\u0000'), '\\00');
    assert.equal(escapeFilterValue('*)(uid=*))(|(uid=*'), '\\2a\\29\\28uid=\\2a\\29\\29\\28|\\28uid=\\2a');
    assert.equal(escapeFilterValue('ada@example.test'), 'ada@example.test');
    assert.equal(escapeFilterValue('Jörg Größe'), 'Jörg Größe');
  });

  it('asks for an entry of every object class whose attribute of any filter equals the name', () => {
    const filter = userSearchFilter({ userObjectClasses: ['inetOrgPerson', 'posixAccount'], userFilters: ['uid', 'mail'] }, 'a*');
    assert.equal(filter, '(&(objectClass=inetOrgPerson)(objectClass=posixAccount)(|(uid=a\\2a)(mail=a\\2a)))');
  });

  it('searches userBase under baseDn, an absolute userBase as it is, and the whole baseDn for a userBase like "dn"', () => {
    assert.equal(searchBaseOf({ baseDn: 'dc=example,dc=test', userBase: 'ou=people' }), 'ou=people,dc=example,dc=test');
    assert.equal(searchBaseOf({ baseDn: 'dc=example,dc=test', userBase: 'ou=people,dc=example,dc=test' }), 'ou=people,dc=example,dc=test');
    assert.equal(searchBaseOf({ baseDn: 'dc=example,dc=test', userBase: 'dn' }), 'dc=example,dc=test');
  });
});

describe('LDAP server addresses', () => {
  it('takes ldaps://, ldap:// with StartTLS, and ldap:// in the clear on a loopback host only', () => {
    assert.equal(ldapServerProblem('ldaps://ldap.example.com:636', false), undefined);
    assert.equal(ldapServerProblem('ldap://ldap.example.com', true), undefined);
    assert.equal(ldapServerProblem('ldap://127.0.0.1:3890', false), undefined);
    assert.match(ldapServerProblem('ldap://ldap.example.com', false) ?? '', /startTls/);
  });

  it('refuses other schemes, credentials, paths, queries and fragments', () => {
    for (const url of [
      'https://ldap.example.com',
      'ldap.example.com',
      'ldaps://u:p@ldap.example.com',
      'ldaps://ldap.example.com/dc=x',
      'ldaps://h?uid',
      'ldaps://h#x',
    ]) {
      assert.ok(ldapServerProblem(url, true), url);
    }
  });
});
