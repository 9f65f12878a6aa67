import { argon2 as argon2Cb, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const argon2 = promisify(argon2Cb);

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. Node runs it on the
// libuv thread pool, so hashing never blocks the event loop.
const PARAMS = { memory: 19456, passes: 2, parallelism: 1 };
const TAG_LENGTH = 32;

function b64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

/** An argon2id hash in the PHC string format: `$argon2id$v=19$m=..,t=..,p=..$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const nonce = randomBytes(16);
  const tag = await argon2('argon2id', { message: password, nonce, ...PARAMS, tagLength: TAG_LENGTH });
  return `$argon2id$v=19$m=${PARAMS.memory},t=${PARAMS.passes},p=${PARAMS.parallelism}$${b64(nonce)}$${b64(tag)}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

// Verified when the user is unknown, so that "no such user" and "wrong
// password" take the same time.
let dummyHash: Promise<string> | undefined;

/** Constant-time check of a password against a PHC hash; `undefined` hash = unknown user. */
export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  const stored = hash ?? (await (dummyHash ??= hashPassword(randomBytes(16).toString('hex'))));
  const match = PHC.exec(stored);
  if (!match) return false;
  const [, m, t, p, salt, expected] = match;
  const expectedTag = Buffer.from(expected!, 'base64');
  const tag = await argon2('argon2id', {
    message: password,
    nonce: Buffer.from(salt!, 'base64'),
    memory: Number(m),
    passes: Number(t),
    parallelism: Number(p),
    tagLength: expectedTag.length,
  });
  return Boolean(hash) && timingSafeEqual(tag, expectedTag);
}
