import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Queryable } from '../storage/database.ts';
import { findSamlApp } from '../storage/saml-apps.ts';
import { samlAttributes, samlSubjectOf } from '../queries/saml-subject.ts';
import { SAML_PATHS, samlClientId } from '../domain/saml/engine-client.ts';
import { failureResponseXml, STATUS, successResponseXml } from '../domain/saml/messages.ts';
import { NAMEID_FORMATS } from '../domain/saml/requests.ts';
import { SamlRefused } from '../domain/saml/xml.ts';
import { signElement } from '../security/saml-signatures.ts';
import { encryptAssertionIn } from '../security/saml-encryption.ts';
import { MetadataProblem, parseSpMetadata } from '../domain/saml/metadata.ts';
import type { SamlResponseHooks } from '../commands/token-hooks.ts';
import type { HookAttribute } from '../domain/token-hooks.ts';
import { TokenHookFailed } from '../engine/token-hooks.ts';
import type { PostedMessage } from '../pages/saml.ts';
import type { PendingSamlRequest, SamlRequestStore } from './request-store.ts';
import type { IdpKeys } from './idp-keys.ts';
import type { SessionParticipants } from './participants.ts';

// The end of a SAML sign-in: the engine sends the browser back with a code
// for the app's engine client. The code is the proof that the engine's
// authorization (session, login steps, second factors, policies) passed for
// this very request: it must be one the engine issued to that client, for
// this redirect URI, with the PKCE challenge of the verifier kept beside
// the request, and it is consumed here, so it proves it once.

export interface ContinueDeps {
  db: Queryable;
  store: SamlRequestStore;
  provider: () => Provider;
  keys: IdpKeys;
  issuer: string;
  idpEntityId: string;
  participants: SessionParticipants;
  hooks?: SamlResponseHooks;
}

interface CodeRecord {
  accountId?: string;
  clientId?: string;
  redirectUri?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  amr?: string[];
  acr?: string;
  authTime?: number;
  sessionUid?: string;
  consumed?: unknown;
  consume(): Promise<void>;
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

async function redeem(deps: ContinueDeps, pending: PendingSamlRequest, code: string): Promise<CodeRecord> {
  const record = code.length <= 200 ? ((await deps.provider().AuthorizationCode.find(code)) as unknown as CodeRecord | undefined) : undefined;
  const challenge = createHash('sha256').update(pending.verifier).digest('base64url');
  if (
    !record ||
    record.consumed ||
    !record.accountId ||
    record.clientId !== samlClientId(pending.appId) ||
    record.redirectUri !== `${deps.issuer}${SAML_PATHS.continue}` ||
    record.codeChallengeMethod !== 'S256' ||
    !sameText(record.codeChallenge ?? '', challenge)
  )
    throw new SamlRefused('the sign-in did not complete for this request');
  await record.consume();
  return record;
}

/** Read from the stored document, so that apps added before encryption was offered get it too. */
function encryptionCertificatesOf(metadataXml: string): string[] {
  try {
    return parseSpMetadata(metadataXml).encryptionCertificates;
  } catch (err) {
    if (err instanceof MetadataProblem || err instanceof SamlRefused) throw new SamlRefused(`the service provider’s metadata cannot be used: ${err.message}`);
    throw err;
  }
}

/**
 * The signed response for the request waiting under `state`, as a form to
 * POST to its ACS; SamlRefused when the request or the sign-in is not one.
 */
export async function finishSignIn(ctx: Context, deps: ContinueDeps): Promise<PostedMessage> {
  const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
  const pending = await deps.store.take(state);
  if (!pending) throw new SamlRefused('this sign-in has expired or was already finished');
  const app = await findSamlApp(deps.db, pending.appId);
  if (!app) throw new SamlRefused('the service provider was removed');
  const target = { idpEntityId: deps.idpEntityId, spEntityId: app.entity_id, acsUrl: pending.acsUrl, inResponseTo: pending.requestId };
  const posted = (xml: string): PostedMessage => ({
    action: pending.acsUrl,
    field: 'SAMLResponse',
    value: Buffer.from(xml, 'utf8').toString('base64'),
    appName: app.name,
    ...(pending.relayState === undefined ? {} : { relayState: pending.relayState }),
  });
  const error = ctx.query.error;
  if (error !== undefined) {
    // A passive request the engine could not answer without the user (Core 3.4.1.1: NoPassive).
    if (pending.isPassive && (error === 'login_required' || error === 'interaction_required' || error === 'account_selection_required'))
      return posted(failureResponseXml(target, STATUS.responder, STATUS.noPassive));
    throw new SamlRefused('the sign-in was not completed');
  }
  const code = typeof ctx.query.code === 'string' ? ctx.query.code : '';
  const record = await redeem(deps, pending, code);
  const subject = await samlSubjectOf(deps.db, record.accountId!, app.project_id);
  if (!subject) throw new SamlRefused('the user cannot sign in');
  const email = pending.nameIdFormat === NAMEID_FORMATS.email;
  if (email && !subject.user.email) throw new SamlRefused('the service provider asks for an email address, and the user has none');
  let hookAttributes: HookAttribute[] | undefined;
  try {
    hookAttributes = await deps.hooks?.samlAttributes({ userId: subject.user.id, appId: app.id, spEntityId: app.entity_id });
  } catch (err) {
    // A presamlresponse hook with interruptOnError failed (docs/actions.md): the SP is told the IdP could not answer.
    if (err instanceof TokenHookFailed) return posted(failureResponseXml(target, STATUS.responder));
    throw err;
  }
  const nameId = email ? subject.user.email! : subject.user.id;
  // Single logout repeats to this app what it was told now (participants.ts).
  if (record.sessionUid) await deps.participants.note(record.sessionUid, app.id, { nameId, nameIdFormat: pending.nameIdFormat });
  const { xml, assertionId } = successResponseXml(target, {
    nameId,
    nameIdFormat: pending.nameIdFormat,
    sessionIndex: record.sessionUid ?? '',
    authTime: new Date((record.authTime ?? Math.floor(Date.now() / 1000)) * 1000),
    mfa: record.acr === 'mfa',
    attributes: samlAttributes(subject.user, subject.roles),
    ...(hookAttributes?.length ? { hookAttributes } : {}),
  });
  const signed = signElement(xml, assertionId, 'Assertion', deps.keys.signer());
  const [encryptFor] = encryptionCertificatesOf(app.metadata_xml);
  return posted(encryptFor ? encryptAssertionIn(signed, encryptFor) : signed);
}
