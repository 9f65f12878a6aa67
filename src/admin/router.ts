import Router, { type RouterParameterMiddleware } from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Logger } from '../logger.ts';
import type { OrgSettings } from '../commands/setup-org.ts';
import { apiErrors } from './errors.ts';
import { NotFound } from '../domain/errors.ts';
import { jsonBody } from './json-body.ts';
import { authenticate } from './authenticate.ts';
import type { TokenVerifier } from '../domain/tokens.ts';
import { dpopProofCheck } from '../engine/dpop-resource-proofs.ts';
import { throttledAuthentication } from './throttled.ts';
import type { AuthThrottle } from '../security/auth-throttle.ts';
import { orgRoutes } from './orgs.ts';
import { userRoutes } from './users.ts';
import { memberRoutes } from './members.ts';
import { featureRoutes } from './features.ts';
import { projectRoutes } from './projects.ts';
import { appRoutes } from './apps.ts';
import { signingKeyRoutes, type SigningKeyAdmin } from './signing-keys.ts';
import { policyRoutes } from './policies.ts';
import { searchRoutes } from './search.ts';
import { smtpRoutes, type SmtpAdmin } from './smtp.ts';
import { idpRoutes } from './idps.ts';
import { idpLinkRoutes } from './idp-links.ts';
import type { IdpCommandDeps } from '../commands/idps.ts';
import { userCodeRoutes } from './user-codes.ts';
import { actionRoutes } from './actions.ts';
import { userMetadataRoutes } from './user-metadata.ts';
import { messageTextRoutes } from './message-texts.ts';
import { smsRelayRoutes, type SmsAdmin } from './sms-relay.ts';
import { LOCKOUT_POLICY } from '../domain/policies/lockout.ts';
import { LOGIN_POLICY } from '../domain/policies/login.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import type { Announce } from '../storage/invalidation.ts';
import type { OutboundFetch } from '../outbound/client.ts';

export interface AdminApiDeps {
  db: Database;
  log: Logger;
  settings: OrgSettings;
  verifiers: TokenVerifier[];
  /** Key of the keyed digests of generated secrets. */
  secretKey: Buffer;
  /** Commands tell every node's caches what they changed. */
  announce: Announce;
  engine: EngineHolder;
  /** Seconds a browser session lives without activity: its last activity is its expiry less this. */
  sessionIdleLifetime: number;
  signingKeys: SigningKeyAdmin;
  /** Counts unknown or invalid bearer tokens per client address. */
  throttle: AuthThrottle;
  smtp: SmtpAdmin;
  /** Seals identity providers' client secrets; the outbound fetch their discovery goes through. */
  idps: Omit<IdpCommandDeps, 'db'>;
  /** The outbound client's fetch for addresses apps give (SAML metadata URLs). */
  appFetch: OutboundFetch;
  /** Seals the action targets' signing keys. */
  actionSealingKey: Buffer;
  sms: SmsAdmin;
}

const API_PREFIXES = ['/admin/v1', '/management/v1', '/v2', '/v2beta'];

const ID_PARAMS = ['userId', 'projectId', 'appId', 'keyId', 'tokenId', 'grantId', 'passkeyId', 'sessionId', 'idpId', 'targetId'];
const ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Role keys are the caller's own names: no white space, no control character, 1–200 characters (src/admin/app-schemas.ts). */
const KEY_PARAMS = ['roleKey'];
const KEY = /^[^\s\p{Cc}]{1,200}$/u;

/** A path segment that cannot name anything (a NUL, a lone surrogate, an id of another shape) is simply not found, and never reaches SQL. */
const checkSegment =
  (shape: RegExp): RouterParameterMiddleware =>
  (value, _ctx, next) => {
    if (!shape.test(value) || !value.isWellFormed()) throw new NotFound('not found');
    return next();
  };
const checkId = checkSegment(ID);
const checkKey = checkSegment(KEY);

/**
 * The admin and management REST API (docs/api/README.md): errors in one
 * format, JSON bodies, bearer authentication, then the resource routes.
 */
export function adminRouter({
  db,
  log,
  settings,
  verifiers,
  secretKey,
  announce,
  engine,
  sessionIdleLifetime,
  signingKeys,
  throttle,
  smtp,
  idps,
  appFetch,
  actionSealingKey,
  sms,
}: AdminApiDeps): Router {
  const codes = { key: secretKey, issuer: engine.provider.issuer };
  const resources = [
    searchRoutes(db),
    orgRoutes(db, settings, announce),
    userRoutes(db, announce, settings, secretKey, engine, sessionIdleLifetime),
    memberRoutes(db),
    featureRoutes(db, announce),
    projectRoutes(db, announce),
    appRoutes({ db, engine, announce, secretKey, fetchMetadata: appFetch }),
    signingKeyRoutes(db, signingKeys),
    policyRoutes(db, announce, [LOCKOUT_POLICY, LOGIN_POLICY, settings.passwordComplexity]),
    smtpRoutes(db, smtp),
    idpRoutes({ db, ...idps }, announce),
    idpLinkRoutes(db),
    userCodeRoutes(db, codes, () => announce('users')),
    actionRoutes(db, announce, actionSealingKey),
    userMetadataRoutes(db),
    messageTextRoutes(db),
    smsRelayRoutes(db, sms),
  ];
  const router = new Router();
  // Authentication before body parsing: an anonymous caller cannot make us
  // read a megabyte.
  router.use(API_PREFIXES, apiErrors(log), throttledAuthentication(authenticate(db, verifiers, dpopProofCheck(engine)), throttle), ...jsonBody());
  for (const resource of resources) {
    // A handler of its own per name: the router runs one handler function
    // once per request, so a shared one would check only the first id.
    for (const name of ID_PARAMS) resource.param(name, (value, ctx, next) => checkId(value, ctx, next));
    for (const name of KEY_PARAMS) resource.param(name, (value, ctx, next) => checkKey(value, ctx, next));
    router.use(resource.routes(), resource.allowedMethods({ throw: false }));
  }
  router.all(
    API_PREFIXES.map((prefix) => `${prefix}/{*rest}`),
    () => {},
  );
  return router;
}
