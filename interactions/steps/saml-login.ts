import { deflateRawSync } from 'node:zlib';
import type { Context } from 'koa';
import { messageId } from '../../src/domain/saml/messages.ts';
import { authnRequestXml, spEndpoints } from '../../src/domain/saml/sp-messages.ts';
import { ALGORITHMS, signElement, signRedirect } from '../../src/security/saml-signatures.ts';
import { spSigner } from '../../src/security/saml-sp-key.ts';
import type { SamlLoginStates } from '../../src/security/saml-login-states.ts';
import type { IdpMetadata } from '../../src/domain/saml/idp-metadata.ts';
import type { LoginIdp } from '../../src/queries/idps.ts';
import { translate } from '../../src/pages/i18n.ts';
import { postFormPage } from '../../src/pages/saml.ts';
import { type InteractionKit, type Loaded, render, renderMessage } from '../context.ts';
import type { ExternalIdpDeps, ExternalIdpStep } from './external-idp.ts';

export interface SamlLoginDeps {
  samlStates: SamlLoginStates;
  fetchFor: ExternalIdpDeps['fetchFor'];
  upstreams: ExternalIdpDeps['upstreams'];
  issuer: string;
}

export interface SamlLoginStep {
  /** The login-name page's button of a SAML provider: an AuthnRequest to its IdP, on the configured binding. */
  start(ctx: Context, loaded: Loaded, login: LoginIdp): Promise<void>;
  /** `GET /ui/login/{uid}/idps/saml/return?token=…`: the identity the ACS checked, then what follows any provider's answer. */
  complete(ctx: Context): Promise<void>;
}

/**
 * Signing in through a SAML provider (docs/idps.md, SAML). The request's
 * ID and the interaction wait server side under the RelayState; the ACS
 * (src/saml/sp-routes.ts) checks the response and sends the browser back
 * here with a one-time token, inside the interaction's own cookie path.
 */
export function samlLoginStep(
  kit: InteractionKit,
  deps: SamlLoginDeps,
  external: Pick<ExternalIdpStep, 'loginIdp' | 'afterUpstream' | 'failed'>,
): SamlLoginStep {
  const commonName = new URL(deps.issuer).hostname;

  async function start(ctx: Context, loaded: Loaded, login: LoginIdp): Promise<void> {
    if (login.upstream.protocol !== 'saml') return renderMessage(ctx, loaded, 'sessionExpired', 400);
    const upstream = login.upstream;
    let metadata: IdpMetadata;
    try {
      metadata = await deps.upstreams.samlMetadata(login.idp, upstream, deps.fetchFor({ orgId: login.idp.orgId }));
    } catch (err) {
      return external.failed(ctx, loaded, login.idp.name, err);
    }
    const requestId = messageId();
    const relayState = await deps.samlStates.putPending({ uid: loaded.interaction.uid, idpId: login.idp.id, requestId });
    const sp = spEndpoints(deps.issuer, login.idp.id);
    // The configured binding, or the one the IdP offers when it offers only the other.
    const redirect = (upstream.binding === 'SAML_BINDING_REDIRECT' && metadata.sso.redirect) || !metadata.sso.post;
    const destination = redirect ? metadata.sso.redirect! : metadata.sso.post!;
    const xml = authnRequestXml({ id: requestId, sp, destination, nameIdFormat: upstream.nameIdFormat });
    const signer = upstream.withSignedRequest ? spSigner(login.secret, login.idp, commonName) : undefined;
    if (redirect) {
      // SAML 2.0 Bindings 3.4.4.1: the signature covers the encoded parameters in this order.
      let query = `SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}&RelayState=${encodeURIComponent(relayState)}`;
      if (signer) {
        query += `&SigAlg=${encodeURIComponent(ALGORITHMS.rsaSha256)}`;
        query += `&Signature=${encodeURIComponent(signRedirect(query, signer))}`;
      }
      ctx.status = 303;
      ctx.set('Cache-Control', 'no-store');
      return ctx.redirect(`${destination}${destination.includes('?') ? '&' : '?'}${query}`);
    }
    const body = signer ? signElement(xml, requestId, 'AuthnRequest', signer) : xml;
    const { lang, t } = loaded.page;
    render(
      ctx,
      postFormPage(
        lang,
        t,
        { action: destination, field: 'SAMLRequest', value: Buffer.from(body, 'utf8').toString('base64'), relayState, appName: login.idp.name },
        translate(t, 'idpSignInWith', { idp: login.idp.name }),
      ),
    );
  }

  async function complete(ctx: Context): Promise<void> {
    const loaded = await kit.load(ctx);
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    const verified = await deps.samlStates.takeVerified(token);
    if (!verified || verified.uid !== loaded.interaction.uid) return renderMessage(ctx, loaded, 'sessionExpired', 400);
    const login = await external.loginIdp(loaded, verified.idpId);
    if (!login) return renderMessage(ctx, loaded, 'sessionExpired', 400);
    await external.afterUpstream(ctx, loaded, login.idp, verified.identity);
  }

  return { start, complete };
}
