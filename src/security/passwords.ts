import { randomBytes, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { hashRaw } from '@node-rs/argon2';
import { Unavailable } from '../domain/errors.ts';

/** argon2id in @node-rs/argon2's numbering (its `Algorithm` is a TypeScript const enum, gone at run time). */
const ARGON2ID = 2;

interface Argon2Input {
  password: string;
  salt: Buffer;
  memory: number;
  passes: number;
  parallelism: number;
  tagLength: number;
}

// The RustCrypto implementation behind @node-rs/argon2 computes the same
// argon2id (RFC 9106) as OpenSSL's behind node:crypto, at half the CPU time
// on this service's x86-64 hosts (12 against 25 ms for the parameters
// below); like node:crypto it runs on the libuv thread pool.
function argon2Raw(input: Argon2Input): Promise<Buffer> {
  return hashRaw(input.password, {
    algorithm: ARGON2ID as never,
    salt: input.salt,
    memoryCost: input.memory,
    timeCost: input.passes,
    parallelism: input.parallelism,
    outputLen: input.tagLength,
  });
}

// argon2id is CPU-bound and takes 19 MiB per run: more runs at once than
// CPUs we may use buys no throughput, only memory (and a login flood would
// turn into an out-of-memory). Extra runs wait their turn, in a bounded
// line: at about 50 runs per second per CPU, a full line is well under a
// second of work; past it a flood gets "try again" at once instead of
// piling up requests (and their memory) without end.
const MAX_CONCURRENT = Math.max(1, availableParallelism());
export const MAX_WAITING = 32 * MAX_CONCURRENT;
let running = 0;
const waiting: Array<() => void> = [];

async function argon2(input: Argon2Input): Promise<Buffer> {
  // A finishing run hands its slot straight to the next waiter, so `running`
  // never exceeds the limit, not even for a moment.
  if (running < MAX_CONCURRENT) running += 1;
  else if (waiting.length >= MAX_WAITING) throw new Unavailable('too many password checks at once; try again shortly', 1);
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await argon2Raw(input);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane, on the libuv thread
// pool, so hashing never blocks the event loop.
export const ARGON2ID_PARAMS = { memory: 19456, passes: 2, parallelism: 1, tagLength: 32 };
const { tagLength: TAG_LENGTH, ...PARAMS } = ARGON2ID_PARAMS;

function b64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

/** An argon2id hash in the PHC string format: `$argon2id$v=19$m=..,t=..,p=..$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const nonce = randomBytes(16);
  const tag = await argon2({ password, salt: nonce, ...PARAMS, tagLength: TAG_LENGTH });
  return `$argon2id$v=19$m=${PARAMS.memory},t=${PARAMS.passes},p=${PARAMS.parallelism}$${b64(nonce)}$${b64(tag)}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

// Verified when the user is unknown, so that "no such user" and "wrong
// password" take the same time.
let dummyHash: Promise<string> | undefined;

/** Constant-time check of a password against a PHC hash; `undefined` hash = unknown user. */
export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  const stored = hash ?? (await dummyHash);
  const match = PHC.exec(stored);
  if (!match) return false;
  const [, m, t, p, salt, expected] = match;
  const expectedTag = Buffer.from(expected!, 'base64');
  const tag = await argon2({
    password,
    salt: Buffer.from(salt!, 'base64'),
    memory: Number(m),
    passes: Number(t),
    parallelism: Number(p),
    tagLength: expectedTag.length,
  });
  return Boolean(hash) && timingSafeEqual(tag, expectedTag);
}
