import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CompactSign, importJWK, jwtVerify, createLocalJWKSet } from 'jose';
import { jwtAccessTokens, type JwtTokenRecord } from '../../src/engine/jwt-access-tokens.ts';
import { generateSigningKey, publicJwks } from '../../src/keys/signing-keys.ts';

// Our JWT access tokens are built around node:crypto's RS256 signature
// instead of jose's SignJWT (docs/decisions.md). RSASSA-PKCS1-v1_5 is
// deterministic, so the token must be exactly what jose signs for the same
// header and claims: any slip in the JWS framing shows here.

const issuer = 'https://id.example.com';
const record: JwtTokenRecord = {
  jti: 'token-id',
  clientId: '300000000000000001',
  scope: 'openid profile',
  jkt: 'thumbprint',
  extra: { aud: ['another-audience'], act: { sub: 'actor' } },
  client: { project_id: '300000000000000002' },
};

async function tokens() {
  const { privateJwk } = await generateSigningKey();
  return { privateJwk, jwt: jwtAccessTokens(issuer, [privateJwk]) };
}

describe('JWT access tokens', () => {
  test('are byte for byte what jose signs for the same protected header and claims', async () => {
    const { privateJwk, jwt } = await tokens();
    const value = await jwt.sign(record, 1_700_000_000, 1_700_003_600);
    const [header, payload] = value
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown);
    const expected = await new CompactSign(Buffer.from(JSON.stringify(payload)))
      .setProtectedHeader(header as { alg: string })
      .sign(await importJWK(privateJwk, 'RS256'));
    assert.equal(value, expected);
  });

  test('carry the documented header and claims, and verify against the published key set', async () => {
    const { privateJwk, jwt } = await tokens();
    const value = await jwt.sign(record, 1_700_000_000, 1_700_003_600);
    const keys = createLocalJWKSet(publicJwks([privateJwk]));
    const { payload, protectedHeader } = await jwtVerify(value, keys, {
      issuer,
      typ: 'at+jwt',
      algorithms: ['RS256'],
      currentDate: new Date(1_700_000_100_000),
    });
    assert.deepEqual(protectedHeader, { alg: 'RS256', kid: privateJwk.kid, typ: 'at+jwt' });
    assert.deepEqual(payload, {
      client_id: record.clientId,
      scope: 'openid profile',
      act: { sub: 'actor' },
      cnf: { jkt: 'thumbprint' },
      iss: issuer,
      sub: record.clientId,
      aud: [record.clientId, '300000000000000002', 'another-audience'],
      jti: 'token-id',
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
  });

  test('name their record; a tampered, foreign, oversized or malformed value names none', async () => {
    const { jwt } = await tokens();
    const other = await tokens();
    const now = Math.floor(Date.now() / 1000);
    const value = await jwt.sign(record, now, now + 600);
    assert.equal(await jwt.tokenIdOf(value), 'token-id');

    const [header, , signature] = value.split('.');
    const forged = Buffer.from(JSON.stringify({ iss: issuer, jti: 'another-token', iat: now, exp: now + 600 })).toString('base64url');
    assert.equal(await jwt.tokenIdOf(`${header}.${forged}.${signature}`), undefined);
    assert.equal(await jwt.tokenIdOf(await other.jwt.sign(record, now, now + 600)), undefined);
    assert.equal(await jwt.tokenIdOf(`${value}${'A'.repeat(8192)}`), undefined);
    for (const garbage of ['', 'a.b', 'a.b.c', '...', `${header}.%%%.${signature}`]) assert.equal(await jwt.tokenIdOf(garbage), undefined, garbage);
  });
});
