import { argon2 as nodeArgon2, generateKeyPairSync, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { CompactSign, importJWK } from 'jose';
import { ARGON2ID_PARAMS, hashPassword, verifyPassword } from '../src/security/passwords.ts';

// The crypto floor of the core the servers run on, measured in the same run
// as the scenarios (bench/run.ts starts this pinned to that core before the
// servers take load): how many RS256 signatures and argon2id password checks
// one core does per second when it does nothing else. The absolute targets
// of the signing and hashing scenarios are fractions of these, so they mean
// the same on a fast and on a slow host. Prints one JSON line.

const SECONDS = Number(process.env.BENCH_FLOOR_SECONDS ?? 2);

/** Runs `op` with `inFlight` calls at a time for SECONDS; answers completed calls per second. */
async function rate(op: () => Promise<unknown>, inFlight: number): Promise<number> {
  for (let i = 0; i < 3; i++) await op();
  const started = performance.now();
  const until = started + SECONDS * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < until) {
      await op();
      done++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return Math.round((done / ((performance.now() - started) / 1000)) * 10) / 10;
}

// RS256 as the engine signs tokens: jose over WebCrypto, a 2048-bit key,
// several signatures in flight as under load.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = await importJWK({ ...privateKey.export({ format: 'jwk' }), alg: 'RS256' }, 'RS256');
const payload = new TextEncoder().encode(JSON.stringify({ iss: 'http://127.0.0.1', sub: randomBytes(8).toString('hex'), exp: 2e9 }));
const rs256 = await rate(() => new CompactSign(payload).setProtectedHeader({ alg: 'RS256', kid: 'k' }).sign(key), 16);

// argon2id as the login checks a password: the server's own code and
// parameters, one check at a time (the server runs one per CPU it may use).
const hash = await hashPassword('correct horse battery staple');
const argon2id = await rate(() => verifyPassword('correct horse battery staple', hash), 1);

// The same check through node:crypto's OpenSSL argon2 (what the service used
// before), to compare with figures measured with it.
const salt = randomBytes(16);
const derive = promisify(nodeArgon2);
const argon2idOpenssl = await rate(() => derive('argon2id', { message: 'correct horse battery staple', nonce: salt, ...ARGON2ID_PARAMS }), 1);

process.stdout.write(`${JSON.stringify({ rs256_signs_per_s: rs256, argon2id_checks_per_s: argon2id, argon2id_openssl_checks_per_s: argon2idOpenssl })}\n`);
