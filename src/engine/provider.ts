import Provider from 'oidc-provider';
import type { Logger } from '../logger.ts';
import { requestIdOf } from '../http/request-context.ts';
import { engineConfiguration, type EngineDependencies } from './configuration.ts';

// One factory builds the whole engine, because rotating signing keys means
// building a new Provider (it snapshots its keys at construction) and
// everything attached to an instance must be attached again.
export function buildProvider(deps: EngineDependencies, log: Logger): Provider {
  const provider = new Provider(deps.config.issuer, engineConfiguration(deps));
  provider.proxy = deps.config.trustProxy;

  // SEED 4.7 lets clients cache the key set; keys are published before they
  // sign, so a cache of max-age never misses a key in use.
  const jwksCacheControl = `public, max-age=${deps.config.jwksMaxAge}`;
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'jwks' && ctx.status === 200) ctx.set('Cache-Control', jwksCacheControl);
  });

  provider.on('server_error', (ctx, err) => {
    log.error({ err, requestId: requestIdOf(ctx.req), route: ctx.oidc?.route }, 'engine server_error');
  });
  return provider;
}
