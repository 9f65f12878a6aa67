import { Ajv } from 'ajv';
import { hookAnswerSchema, readAnswer, type HookAnswer, type HookFunction, type ReadAnswer } from '../domain/token-hooks.ts';
import { userClaims, type UserLookup } from '../engine/accounts.ts';
import { TokenHookFailed, type HookSubject, type TokenHooks } from '../engine/token-hooks.ts';
import type { Logger } from '../logger.ts';
import type { OutboundClient } from '../outbound/client.ts';
import { OutboundError } from '../outbound/errors.ts';
import { toUserView } from '../queries/get-user.ts';
import type { HookTarget, HookTargets } from '../queries/token-hook-targets.ts';
import { SIGNATURE_HEADER, signatureHeader } from '../security/webhook-signature.ts';
import type { Database } from '../storage/database.ts';
import { userGrantsOf } from '../storage/grants.ts';
import { metadataClaimOf } from '../storage/user-metadata.ts';
import type { UserRow } from '../storage/users.ts';
import { setMetadataFromHook } from './user-metadata.ts';

// Token hooks (docs/actions.md, "Token hooks"): at token issuance, the
// restCall targets of `preuserinfo` and `preaccesstoken` are POSTed what
// the token is about, signed, one after the other, each within its own
// timeout, and answer claims to add and user metadata to set.

/** How a call ended, for /metrics: a bounded set. */
export type HookOutcome = 'ok' | 'timeout' | 'unreachable' | 'http_error' | 'invalid_answer' | 'write_failed';

export interface TokenHookOptions {
  db: Database;
  log: Logger;
  outbound: OutboundClient;
  lookupUser: UserLookup;
  targets: HookTargets;
  /** Told every call's target, outcome and duration in seconds. */
  onCall?(targetId: string, outcome: HookOutcome, seconds: number): void;
}

const ajv = new Ajv({ allErrors: false, strict: true });
const validAnswer = ajv.compile<HookAnswer>(hookAnswerSchema);

class HookCallFailed extends Error {
  readonly outcome: HookOutcome;
  constructor(outcome: HookOutcome, message: string) {
    super(message);
    this.outcome = outcome;
  }
}

/** The body every target of one call gets (ZITADEL's fields, in our API's spelling). */
async function requestBody(db: Database, name: HookFunction, subject: HookSubject, user: UserRow): Promise<string> {
  const [metadata, grants] = await Promise.all([metadataClaimOf(db, user.id), userGrantsOf(db, user.id)]);
  return JSON.stringify({
    function: name,
    userinfo: subject.userinfo ?? userClaims(user),
    user: toUserView(user),
    org: { id: user.org_id, name: user.org_name, primaryDomain: user.primary_domain },
    userMetadata: Object.entries(metadata).map(([key, value]) => ({ key, value })),
    userGrants: grants.map((grant) => ({ id: grant.id, projectId: grant.project_id, orgId: grant.org_id, roleKeys: grant.role_keys })),
    clientId: subject.clientId,
    scopes: subject.scopes,
  });
}

/** Why a call failed, naming no part of the answer: the status, the connection's failure, or what the answer lacks. */
function failureOf(err: unknown): HookCallFailed {
  if (err instanceof HookCallFailed) return err;
  if (err instanceof OutboundError)
    return new HookCallFailed(err.kind === 'timeout' ? 'timeout' : err.kind === 'too-large' ? 'invalid_answer' : 'unreachable', err.message);
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  const text = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return new HookCallFailed('unreachable', text.split('\n')[0]!.slice(0, 300));
}

/** One signed POST and its answer, read and checked. */
async function callTarget(options: TokenHookOptions, target: HookTarget, body: string): Promise<ReadAnswer> {
  const fetcher = options.outbound.fetcher({ trust: 'instance', timeoutMs: target.timeoutMs });
  const response = await fetcher(target.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', [SIGNATURE_HEADER]: signatureHeader(target.signingKey, body) },
    body,
  });
  if (response.status < 200 || response.status >= 300) {
    await response.body?.cancel().catch(() => {});
    throw new HookCallFailed('http_error', `the target answered HTTP ${response.status}`);
  }
  const text = await response.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new HookCallFailed('invalid_answer', 'the answer is not JSON');
  }
  if (!validAnswer(answer)) {
    const [error] = validAnswer.errors ?? [];
    throw new HookCallFailed('invalid_answer', `the answer does not fit: ${error?.instancePath || '(body)'} ${error?.message ?? 'is invalid'}`);
  }
  const read = readAnswer(answer);
  if (typeof read === 'string') throw new HookCallFailed('invalid_answer', `the answer does not fit: ${read}`);
  return read;
}

export function tokenHooks(options: TokenHookOptions): TokenHooks {
  const { db, log } = options;
  return {
    async run(name, subject) {
      const targets = await options.targets.of(name);
      if (!targets.length) return undefined;
      const user = await options.lookupUser(subject.userId);
      if (!user) return undefined;
      let body: string;
      try {
        body = await requestBody(db, name, subject, user);
      } catch (err) {
        // The user's metadata or grants could not be read: as if every target had failed.
        const context = { function: name, reason: failureOf(err).message };
        if (targets.some((target) => target.interruptOnError)) {
          log.error(context, 'token hook request could not be built; request refused');
          throw new TokenHookFailed(`token hook request could not be built: ${context.reason}`);
        }
        log.warn(context, 'token hook request could not be built; hooks skipped');
        return undefined;
      }
      const claims: Record<string, unknown> = {};
      for (const target of targets) {
        const started = process.hrtime.bigint();
        let outcome: HookOutcome = 'ok';
        try {
          const answer = await callTarget(options, target, body);
          if (answer.dropped.length) log.warn({ function: name, targetId: target.id, claims: answer.dropped }, 'token hook claims dropped: reserved');
          if (answer.metadata.length) {
            await setMetadataFromHook(db, { id: user.id, orgId: user.org_id }, answer.metadata).catch((err: unknown) => {
              throw new HookCallFailed('write_failed', `its user metadata could not be written: ${err instanceof Error ? err.message : String(err)}`);
            });
          }
          Object.assign(claims, answer.claims);
        } catch (err) {
          const failure = failureOf(err);
          outcome = failure.outcome;
          const context = { function: name, targetId: target.id, outcome, reason: failure.message };
          if (target.interruptOnError) {
            log.error(context, 'token hook failed; request refused');
            throw new TokenHookFailed(`token hook target ${target.id} failed: ${failure.message}`);
          }
          log.warn(context, 'token hook failed; skipped');
        } finally {
          options.onCall?.(target.id, outcome, Number(process.hrtime.bigint() - started) / 1e9);
        }
      }
      return claims;
    },
  };
}
