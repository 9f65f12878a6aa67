import { createPrivateKey, randomBytes, sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

// JWT profile grant assertions (RFC 7523) for a machine user's key file.
// The server refuses a replayed `jti`, so every request needs its own
// assertion; they are signed before the measurement (RS256 costs about a
// millisecond each), spread over worker threads.

export interface MachineKeyFile {
  type: string;
  keyId: string;
  key: string;
  userId: string;
}

interface SignJob {
  kind: 'bench-sign-assertions';
  keyPem: string;
  keyId: string;
  userId: string;
  audience: string;
  lifetime: number;
  count: number;
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function signBatch(job: SignJob): string[] {
  const key = createPrivateKey(job.keyPem);
  const header = b64url({ alg: 'RS256', kid: job.keyId, typ: 'JWT' });
  const now = Math.floor(Date.now() / 1000);
  const out: string[] = new Array(job.count);
  for (let i = 0; i < job.count; i++) {
    const payload = b64url({
      iss: job.userId,
      sub: job.userId,
      aud: job.audience,
      iat: now,
      exp: now + job.lifetime,
      jti: randomBytes(16).toString('base64url'),
    });
    const input = `${header}.${payload}`;
    out[i] = `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
  }
  return out;
}

if (!isMainThread && (workerData as SignJob | undefined)?.kind === 'bench-sign-assertions') {
  parentPort!.postMessage(signBatch(workerData as SignJob));
}

/**
 * `count` assertions with distinct `jti`, valid for `lifetimeSeconds`
 * (at most an hour, the server's limit), signed on up to `threads` threads.
 */
export async function signAssertions(
  keyFile: MachineKeyFile,
  audience: string,
  count: number,
  lifetimeSeconds = 1800,
  threads = availableParallelism(),
): Promise<string[]> {
  const base = {
    kind: 'bench-sign-assertions' as const,
    keyPem: keyFile.key,
    keyId: keyFile.keyId,
    userId: keyFile.userId,
    audience,
    lifetime: lifetimeSeconds,
  };
  const workers = Math.max(1, Math.min(threads, 8, Math.ceil(count / 500)));
  const shares = Array.from({ length: workers }, (_, i) => Math.floor(count / workers) + (i < count % workers ? 1 : 0));
  const batches = await Promise.all(
    shares.map(
      (share) =>
        new Promise<string[]>((resolve, reject) => {
          const worker = new Worker(new URL(import.meta.url), { workerData: { ...base, count: share } satisfies SignJob });
          worker.once('message', (batch: string[]) => {
            resolve(batch);
            void worker.terminate();
          });
          worker.once('error', reject);
          worker.once('exit', (code) => {
            if (code !== 0) reject(new Error(`assertion signer exited with ${code}`));
          });
        }),
    ),
  );
  return batches.flat();
}
