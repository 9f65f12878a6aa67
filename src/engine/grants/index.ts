import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { EngineDependencies } from '../configuration.ts';
import { ROUTES } from '../routes.ts';
import { publicJwks } from '../../keys/signing-keys.ts';
import { JWT_BEARER_GRANT, TOKEN_EXCHANGE_GRANT } from '../../domain/grant-types.ts';
import { JWT_BEARER_PARAMETERS, jwtBearerGrant } from './jwt-bearer.ts';
import { TOKEN_EXCHANGE_PARAMETERS, TOKEN_EXCHANGE_REPEATABLE, tokenExchangeGrant } from './token-exchange.ts';

/**
 * Our grants beside the engine's own (authorization_code, implicit,
 * refresh_token, client_credentials): the JWT profile and token exchange.
 */
export function registerGrants(provider: Provider, deps: EngineDependencies): void {
  const { issuer } = deps.config;
  provider.registerGrantType(
    JWT_BEARER_GRANT,
    jwtBearerGrant(deps.machineKeys, [issuer, `${issuer}${ROUTES.token}`], deps.findAccount) as never,
    JWT_BEARER_PARAMETERS,
  );
  provider.registerGrantType(
    TOKEN_EXCHANGE_GRANT,
    tokenExchangeGrant({
      lookupUser: deps.lookupUser,
      mayImpersonate: deps.mayImpersonate,
      featureEnabled: deps.featureEnabled,
      issuer,
      publicKeys: publicJwks(deps.jwks),
      findAccount: deps.findAccount,
      exchanges: deps.exchanges,
      idTokenLifetime: deps.config.idTokenLifetime,
    }) as never,
    TOKEN_EXCHANGE_PARAMETERS,
    TOKEN_EXCHANGE_REPEATABLE,
  );
}

/** Discovery names token exchange only while the feature is on (docs/api/features.md). */
export function tokenExchangeInDiscoveryWhileOn(deps: EngineDependencies) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    if (ctx.status !== 200) return;
    const body = ctx.body as { grant_types_supported?: string[] };
    if (body.grant_types_supported && !(await deps.featureEnabled('oidcTokenExchange'))) {
      ctx.body = { ...body, grant_types_supported: body.grant_types_supported.filter((g) => g !== TOKEN_EXCHANGE_GRANT) };
    }
  };
}
