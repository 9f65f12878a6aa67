import { createPublicKey, generateKeyPair as generateKeyPairCb } from 'node:crypto';
import { promisify } from 'node:util';
import type { JWK } from 'jose';

const generateKeyPair = promisify(generateKeyPairCb);

export interface MachineKeyPair {
  /** PKCS#1 PEM (`-----BEGIN RSA PRIVATE KEY-----`): handed out once, never stored. */
  privatePem: string;
  publicJwk: JWK;
}

/** An RSA 2048 key pair for the JWT profile grant; the public JWK is what we keep. */
export async function generateMachineKeyPair(keyId: string): Promise<MachineKeyPair> {
  const { privateKey } = await generateKeyPair('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  return { privatePem: privateKey, publicJwk: { ...publicJwk, kid: keyId, alg: 'RS256', use: 'sig' } };
}

/** The key file of a machine user (docs/api/users.md). */
export function serviceAccountKeyFile(keyId: string, userId: string, privatePem: string): string {
  return JSON.stringify({ type: 'serviceaccount', keyId, key: privatePem, userId });
}
