import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context } from 'koa';
import type { Logger } from '../logger.ts';
import type { Database } from '../storage/database.ts';
import { findIdp, type StoredIdp } from '../storage/idps.ts';
import { RETRY_AFTER_SECONDS, StoreUnavailable } from '../storage/outage.ts';
import { INTERACTION_PATH } from '../engine/routes.ts';
import { kindOfType } from '../domain/idps.ts';
import { samlIdentityOf } from '../domain/saml/sp-identity.ts';
import { samlSettingsOf } from '../domain/saml/sp-kind.ts';
import { spEndpoints, spMetadataXml } from '../domain/saml/sp-messages.ts';
import { readSamlResponse } from '../domain/saml/sp-response.ts';
import { SamlRefused } from '../domain/saml/xml.ts';
import type { OutboundFetch } from '../outbound/client.ts';
import type { UpstreamCache } from '../outbound/upstream-cache.ts';
import { UpstreamError } from '../outbound/upstream.ts';
import { unsealSecret } from '../queries/idps.ts';
import { spDecryptionKey, spSigner } from '../security/saml-sp-key.ts';
import type { SamlLoginStates } from '../security/saml-login-states.ts';
import { CATALOGUES, chooseLanguage, translate } from '../pages/i18n.ts';
import { PAGE_HEADERS } from '../pages/layout.ts';
import { messagePage, unavailablePage } from '../pages/messages.ts';
import { readPost } from './bindings.ts';

export interface SamlSpDeps {
  db: Database;
  log: Logger;
  issuer: string;
  /** Unseals a provider's key (it signs our messages and decrypts the IdP's assertions). */
  sealingKey: Buffer;
  /** The outbound client's fetch for a provider: instance-level ones may reach private addresses. */
  fetchFor(scope: { orgId: string | null }): OutboundFetch;
  /** The IdP metadata of providers that read it from a URL, kept between sign-ins. */
  upstreams: Pick<UpstreamCache, 'samlMetadata'>;
  samlStates: SamlLoginStates;
}

/** The route of a provider's interaction page that takes the checked identity (interactions/steps/saml-login.ts). */
export const SAML_RETURN = 'idps/saml/return';

const acsBody = bodyParser({
  enableTypes: ['form'],
  // base64 of the 64 KiB message limit, and RelayState.
  formLimit: '96kb',
  onError: () => {
    throw new SamlRefused('the form could not be read (too large or malformed)');
  },
});

const ID = /^[A-Za-z0-9_-]{1,64}$/;

async function samlIdp(db: Database, id: string): Promise<StoredIdp | undefined> {
  if (!ID.test(id)) return undefined;
  const idp = await findIdp(db, id);
  return idp && kindOfType(idp.kind)?.name === 'saml' ? idp : undefined;
}

function page(ctx: Context, html: string, status: number): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.set(PAGE_HEADERS);
  ctx.body = html;
}

/**
 * Our side of each SAML provider (docs/idps.md, SAML): the SP metadata the
 * IdP is configured with, and the assertion consumer service, which checks
 * the IdP's response and hands the identity to the login it belongs to.
 */
export function samlSpRoutes(deps: SamlSpDeps): Router {
  const router = new Router({ sensitive: true, strict: true });
  const commonName = new URL(deps.issuer).hostname;

  router.get('/idps/:idpId/saml/metadata', async (ctx) => {
    const idp = await samlIdp(deps.db, ctx.params.idpId!);
    if (!idp) {
      ctx.status = 404;
      ctx.type = 'text';
      ctx.body = 'no SAML identity provider here';
      return;
    }
    const settings = samlSettingsOf(idp.config);
    const signer = spSigner(unsealSecret(deps.sealingKey, idp), idp, commonName);
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/samlmetadata+xml';
    ctx.body = spMetadataXml(spEndpoints(deps.issuer, idp.id), signer.certificate, settings.withSignedRequest, settings.nameIdFormat);
  });

  router.post(
    '/idps/:idpId/saml/acs',
    async (ctx, next) => {
      const lang = chooseLanguage(undefined, ctx.get('accept-language'));
      const t = CATALOGUES[lang]!;
      try {
        await next();
      } catch (err) {
        if (err instanceof StoreUnavailable) {
          ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
          return page(ctx, unavailablePage(lang), 503);
        }
        if (!(err instanceof SamlRefused) && !(err instanceof UpstreamError)) throw err;
        const unreachable = err instanceof UpstreamError && err.reason === 'unreachable';
        const idpName = (ctx.state.samlIdpName as string | undefined) ?? 'SAML';
        deps.log.warn(
          {
            requestId: ctx.state.requestId,
            event: 'external_login_failed',
            idpId: ctx.params.idpId,
            reason: unreachable ? 'unreachable' : 'invalid',
            error: err.message,
          },
          'sign-in through a SAML provider failed',
        );
        page(ctx, messagePage(lang, t, translate(t, unreachable ? 'idpUnreachable' : 'idpFailed', { idp: idpName })), unreachable ? 502 : 400);
      }
    },
    acsBody,
    async (ctx) => {
      const idp = await samlIdp(deps.db, ctx.params.idpId!);
      if (!idp) throw new SamlRefused('no SAML identity provider here');
      ctx.state.samlIdpName = idp.name;
      const message = readPost((ctx.request.body ?? {}) as Record<string, unknown>, 'SAMLResponse');
      // The RelayState we sent names the waiting request; it is spent now, whatever follows.
      const pending = message.relayState ? await deps.samlStates.takePending(message.relayState) : undefined;
      if (!pending || pending.idpId !== idp.id) throw new SamlRefused('the response answers no sign-in waiting here (expired, finished, or never started)');
      const settings = samlSettingsOf(idp.config);
      const metadata = await deps.upstreams.samlMetadata(idp, settings, deps.fetchFor({ orgId: idp.orgId }));
      const sp = spEndpoints(deps.issuer, idp.id);
      const assertion = readSamlResponse(message.xml, {
        certificates: metadata.certificates,
        idpEntityId: metadata.entityId,
        entityId: sp.entityId,
        acs: sp.acs,
        decryptionKey: () => spDecryptionKey(unsealSecret(deps.sealingKey, idp)),
      });
      if (assertion.inResponseTo !== pending.requestId) throw new SamlRefused('the response answers another request');
      const fresh =
        (await deps.samlStates.firstSeen(idp.id, `response ${assertion.responseId}`, assertion.notOnOrAfter)) &&
        (await deps.samlStates.firstSeen(idp.id, `assertion ${assertion.assertionId}`, assertion.notOnOrAfter));
      if (!fresh) throw new SamlRefused('the response was presented before');
      const identity = samlIdentityOf(assertion, settings);
      const token = await deps.samlStates.putVerified({ uid: pending.uid, idpId: idp.id, identity });
      ctx.status = 303;
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(`${INTERACTION_PATH}/${encodeURIComponent(pending.uid)}/${SAML_RETURN}?token=${token}`);
    },
  );
  return router;
}
