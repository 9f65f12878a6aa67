import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { escapeFilterValue, ldapServerProblem, searchBaseOf, userSearchFilter } from '../../src/domain/ldap.ts';
import { ldapRootCaProblem, ROOT_CA_MAX_CERTIFICATES } from '../../src/domain/ldap-root-ca.ts';

// docs/idps.md, LDAP: the search a sign-in sends, the addresses a provider may name and the CAs it may trust.

// A self-signed P-256 CA certificate (openssl req -x509), public by nature.
const CA = `-----BEGIN CERTIFICATE-----
MIIBlDCCATmgAwIBAgIUJy1taMkblBpDcJWpWSPLrB2zMAowCgYIKoZIzj0EAwIw
HzEdMBsGA1UEAwwURXhhbXBsZSBEaXJlY3RvcnkgQ0EwHhcNMjYxMTI3MTMyNjI0
WhcNMzYxMTI0MTMyNjI0WjAfMR0wGwYDVQQDDBRFeGFtcGxlIERpcmVjdG9yeSBD
QTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABM3nlk64t7qDPZakPs1Q/N7XUkMD
12+LEllK+cEmviDcNhwVaclHZV2ofV6qDzHHXObaqOMufYfR447XgtuUo2qjUzBR
MB0GA1UdDgQWBBRZdFMlym7JfKni3xgRNoxAocLW+jAfBgNVHSMEGDAWgBRZdFMl
ym7JfKni3xgRNoxAocLW+jAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kA
MEYCIQClR4ma5RMZnuzTkDh/1+9brUbrkfZ48i5mqoarNT6GsQIhAKjKajcYIRQs
o6iT1Pi1qJtKVW4a4jaRoSGmX7x+xw6G
-----END CERTIFICATE-----
`;

describe('rootCa: the certificates an LDAP provider trusts (RFC 7468 PEM)', () => {
  it('takes one certificate, several, CRLF line ends and blank lines between blocks', () => {
    assert.equal(ldapRootCaProblem(CA), undefined);
    assert.equal(ldapRootCaProblem(`${CA}\n${CA}`), undefined);
    assert.equal(ldapRootCaProblem(CA.replace(/\n/g, '\r\n')), undefined);
    assert.equal(ldapRootCaProblem(Array.from({ length: ROOT_CA_MAX_CERTIFICATES }, () => CA).join('')), undefined);
  });

  it('refuses a private key, alone or pasted with the certificate, in any PEM form', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const sec1 = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    for (const pem of [pkcs8, sec1, `${CA}${pkcs8}`, `${sec1}${CA}`]) assert.equal(ldapRootCaProblem(pem), 'must not hold a private key');
  });

  it('refuses text that is no PEM, text around the blocks, other blocks, broken blocks and too many certificates', () => {
    assert.match(ldapRootCaProblem('not a certificate')!, /nothing else/);
    assert.match(ldapRootCaProblem(`subject=CN=Example\n${CA}`)!, /nothing else/);
    assert.match(ldapRootCaProblem('\n \n')!, /must be PEM certificates/);
    const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    assert.match(ldapRootCaProblem(publicKey)!, /only CERTIFICATE blocks/);
    assert.match(ldapRootCaProblem(CA.replace('MIIBlDCC', 'MIIBlDCD'))!, /not an X\.509 certificate/);
    assert.match(ldapRootCaProblem('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')!, /not an X\.509 certificate/);
    assert.match(ldapRootCaProblem(CA.replace('-----END CERTIFICATE-----\n', ''))!, /not closed/);
    assert.match(ldapRootCaProblem(CA.replace('END CERTIFICATE', 'END X509 CRL'))!, /not closed/);
    assert.match(ldapRootCaProblem(Array.from({ length: ROOT_CA_MAX_CERTIFICATES + 1 }, () => CA).join(''))!, /at most 20/);
  });
});

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
