import { Ajv, type ValidateFunction } from 'ajv';
import {
  hookAnswerSchema,
  readAnswer,
  readSamlAnswer,
  samlHookAnswerSchema,
  type HookAnswer,
  type HookAttribute,
  type HookFunction,
  type ReadAnswer,
  type ReadSamlAnswer,
  type SamlHookAnswer,
} from '../domain/token-hooks.ts';
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
// timeout, and answer claims to add and user metadata to set; before a
// SAML response, those of `presamlresponse` answer attributes to add.

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
const validSamlAnswer = ajv.compile<SamlHookAnswer>(samlHookAnswerSchema);

/** What one function's answers are checked with and read into; `dropped` names what the hook may not set. */
interface AnswerReader<A, R extends { dropped: string[]; metadata: ReadAnswer['metadata'] }> {
  validate: ValidateFunction<A>;
  read(answer: A): R | string;
}

const CLAIMS: AnswerReader<HookAnswer, ReadAnswer> = { validate: validAnswer, read: readAnswer };
const ATTRIBUTES: AnswerReader<SamlHookAnswer, ReadSamlAnswer> = {
  validate: validSamlAnswer,
  read: readSamlAnswer,
};

/** Who a SAML response is for, as the presamlresponse hooks are told. */
export interface SamlHookSubject {
  userId: string;
  /** The SAML app. */
  appId: string;
  spEntityId: string;
}

export interface SamlResponseHooks {
  /**
   * Calls the presamlresponse targets in order and answers the attributes
   * they add (none of the response's own), or undefined when no execution
   * is set. Throws TokenHookFailed when a target with interruptOnError fails.
   */
  samlAttributes(subject: SamlHookSubject): Promise<HookAttribute[] | undefined>;
}

class HookCallFailed extends Error {
  readonly outcome: HookOutcome;
  constructor(outcome: HookOutcome, message: string) {
    super(message);
    this.outcome = outcome;
  }
}

/** The body every target of one call gets (ZITADEL's fields, in our API's spelling). */
async function requestBody(db: Database, name: HookFunction, subject: HookSubject & { spEntityId?: string }, user: UserRow): Promise<string> {
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
    ...(subject.spEntityId === undefined ? {} : { spEntityId: subject.spEntityId }),
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
async function callTarget<A, R extends { dropped: string[]; metadata: ReadAnswer['metadata'] }>(
  options: TokenHookOptions,
  target: HookTarget,
  body: string,
  reader: AnswerReader<A, R>,
): Promise<R> {
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
  if (!reader.validate(answer)) {
    const [error] = reader.validate.errors ?? [];
    throw new HookCallFailed('invalid_answer', `the answer does not fit: ${error?.instancePath || '(body)'} ${error?.message ?? 'is invalid'}`);
  }
  const read = reader.read(answer);
  if (typeof read === 'string') throw new HookCallFailed('invalid_answer', `the answer does not fit: ${read}`);
  return read;
}

/**
 * Calls the targets of `name` in order, `take` keeping what each good answer
 * adds; false when no hook ran (no execution, or no such user).
 */
async function runTargets<A, R extends { dropped: string[]; metadata: ReadAnswer['metadata'] }>(
  options: TokenHookOptions,
  name: HookFunction,
  subject: HookSubject & { spEntityId?: string },
  reader: AnswerReader<A, R>,
  take: (answer: R) => void,
): Promise<boolean> {
  const { db, log } = options;
  const targets = await options.targets.of(name);
  if (!targets.length) return false;
  const user = await options.lookupUser(subject.userId);
  if (!user) return false;
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
    return false;
  }
  for (const target of targets) {
    const started = process.hrtime.bigint();
    let outcome: HookOutcome = 'ok';
    try {
      const answer = await callTarget(options, target, body, reader);
      if (answer.dropped.length) {
        if (name === 'presamlresponse')
          log.warn({ function: name, targetId: target.id, attributes: answer.dropped }, 'presamlresponse attributes dropped: the response’s own');
        else log.warn({ function: name, targetId: target.id, claims: answer.dropped }, 'token hook claims dropped: reserved');
      }
      if (answer.metadata.length) {
        await setMetadataFromHook(db, { id: user.id, orgId: user.org_id }, answer.metadata).catch((err: unknown) => {
          throw new HookCallFailed('write_failed', `its user metadata could not be written: ${err instanceof Error ? err.message : String(err)}`);
        });
      }
      take(answer);
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
  return true;
}

export function tokenHooks(options: TokenHookOptions): TokenHooks & SamlResponseHooks {
  return {
    async run(name, subject) {
      const claims: Record<string, unknown> = {};
      const ran = await runTargets(options, name, subject, CLAIMS, (answer) => Object.assign(claims, answer.claims));
      return ran ? claims : undefined;
    },
    async samlAttributes(subject) {
      const attributes = new Map<string, HookAttribute>();
      const ran = await runTargets(
        options,
        'presamlresponse',
        { userId: subject.userId, clientId: subject.appId, scopes: [], spEntityId: subject.spEntityId },
        ATTRIBUTES,
        (answer) => {
          for (const [name, attribute] of answer.attributes) attributes.set(name, attribute);
        },
      );
      return ran ? [...attributes.values()] : undefined;
    },
  };
}
