import { createPrivateKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';

// DPoP proofs (RFC 9449 4.2) for the client_credentials_dpop scenario: one
// ES256 key per run, a fresh proof (new jti, current iat) for every request,
// signed synchronously so the load generator can make one per request.

export interface DpopProofs {
  /** The `DPoP` header of one request. */
  next(): string;
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function dpopProofs(htu: string): DpopProofs {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const header = b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } });
  const key: KeyObject = createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' }));
  return {
    next() {
      const input = `${header}.${b64({ htm: 'POST', htu, iat: Math.floor(Date.now() / 1000), jti: randomUUID() })}`;
      const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
      return `${input}.${signature}`;
    },
  };
}
