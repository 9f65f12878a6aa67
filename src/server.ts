import { createServer, type Server } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import type { ConfigResult } from '../config/load.ts';
import type { Logger } from './logger.ts';
import { openDatabase, type Database } from './storage/database.ts';
import { migrate } from './storage/migrate.ts';
import { closeRedis, connectRedis, logConnectionChanges, redisConfigured, type RedisClient } from './storage/redis.ts';
import { deriveKey, resolveMasterKey, verifyMasterKey } from './keys/master-key.ts';
import { ensureSigningKey, loadSigningKeys, type SigningKey } from './keys/signing-keys.ts';
import { advanceSigningKeys } from './keys/rotation.ts';
import { watchSigningKeys } from './keys/key-watcher.ts';
import { createAdapterFactory } from '../adapters/index.ts';
import { challengeStore } from './security/challenges.ts';
import { ClientDirectory } from '../adapters/clients.ts';
import { buildProvider } from './engine/provider.ts';
import { sessionCookieSameSite } from './engine/configuration.ts';
import { accountFinder } from './engine/accounts.ts';
import { exchangeOutcomes } from './engine/grants/exchange-outcomes.ts';
import { EngineHolder } from './engine/engine-holder.ts';
import { healthRoutes, type Dependency } from './http/health.ts';
import { createMetrics, metricsRoutes } from './http/metrics.ts';
import { trackConnections, type ConnectionTracker } from './http/connections.ts';
import { pageAssetRoutes } from './http/page-assets.ts';
import { consoleRoutes, loadConsoleBundle } from './http/console.ts';
import { localInvalidation, redisInvalidation, type CacheTopic, type Invalidation } from './storage/invalidation.ts';
import type { OrgSettings } from './commands/setup-org.ts';
import { userCache } from './storage/user-cache.ts';
import { machineKeyCache } from './storage/machine-key-cache.ts';
import { featureCache } from './storage/feature-cache.ts';
import { policyCache } from './queries/policy-cache.ts';
import type { FeatureName } from './storage/features.ts';
import { externalCallbackRoutes, interactionRouter } from '../interactions/index.ts';
import { externalLoginStates } from './security/external-login-states.ts';
import { samlLoginStates } from './security/saml-login-states.ts';
import { ldapFor } from './outbound/ldap.ts';
import { providerFetch } from './outbound/upstream.ts';
import { upstreamCache } from './outbound/upstream-cache.ts';
import { createApp } from './app.ts';
import { smtpFromEnvironment, startHousekeeping, startNotifications } from './background-work.ts';
import { samlIdentityProvider } from './saml/router.ts';
import { samlSpRoutes } from './saml/sp-routes.ts';
import { adminRouter } from './admin/router.ts';
import { scimRouter } from './scim/router.ts';
import { patVerifier } from './queries/verify-pat.ts';
import { engineTokenVerifier } from './queries/verify-access-token.ts';
import { impersonationAllowed } from './queries/principal.ts';
import { prepareDataDir, restrictDataDir } from './storage/data-dir.ts';
import { firstStart } from './commands/first-start.ts';
import { ensureConsoleApp } from './commands/console-app.ts';
import { createAuthThrottle } from './storage/auth-failures.ts';
import { outboundClient } from './outbound/client.ts';
import { InvalidArgument } from './domain/errors.ts';
import { ConfigError } from '../config/load.ts';
import { forcedMfaOf } from './engine/second-factor-rule.ts';
import { startEventDeliveries } from './commands/deliver-events.ts';
import { tokenHooks } from './commands/token-hooks.ts';
import { hookTargets } from './queries/token-hook-targets.ts';
import { passwordComplexityKind } from './domain/policies/password-complexity.ts';
import { effectiveSmsSender } from './queries/sms-relay.ts';

export interface RunningServer {
  server: Server;
  url: string;
  db: Database;
  redis?: RedisClient;
  engine: EngineHolder;
  /** Stops accepting, lets in-flight requests finish (bounded), closes the pools. */
  stop(): Promise<void>;
}

/** Every node sees a key rotation within this (docs/api/signing-keys.md). */
const KEY_POLL_MS = 2_000;

/** Start-up, in order: storage → keys → engine → app → listen. */
export async function startServer(config: ConfigResult, log: Logger): Promise<RunningServer> {
  prepareDataDir(config.dataDir);
  const db = await openDatabase(config);
  const closers: Array<() => Promise<unknown> | unknown> = [() => db.close()];
  try {
    const applied = await migrate(db);
    if (applied.length) log.info({ migrations: applied }, 'database migrated');

    const master = await checkedMasterKey(db, config, log);
    const sealingKey = deriveKey(master.key, 'signing key sealing');
    const smtpSealingKey = deriveKey(master.key, 'smtp password sealing');
    const actionSealingKey = deriveKey(master.key, 'action signing key sealing');
    const smsSealingKey = deriveKey(master.key, 'sms signing key sealing');

    const redis = redisConfigured(config) ? await connectRedis(config) : undefined;
    if (redis) closers.unshift(() => closeRedis(redis));
    if (redis) logConnectionChanges(redis, log);

    const secretKey = deriveKey(master.key, 'secret digests');
    const orgSettings = { instanceDomain: config.instanceDomain, passwordComplexity: passwordComplexityKind(config.passwordMinLength) };
    await ensureInstance(db, config, log, { ...orgSettings, secretKey });

    const { keys, retainFor } = await prepareSigningKeys(db, sealingKey, config);
    if (db.kind === 'pglite') restrictDataDir(config.dataDir);

    let currentKeys = keys;
    const metrics = createMetrics(() => currentKeys[0]?.activatesAt);
    const invalidation = redis ? await redisInvalidation(redis, `${config.redisPrefix}invalidate`) : localInvalidation();
    closers.unshift(() => invalidation.close());
    // Commands announce what they changed; every node's caches clear themselves.
    const announce = (topic: CacheTopic) => invalidation.publish(topic);
    const { users, clients, machineKeys, features, policies } = nodeCaches(db, invalidation, config.issuer);
    const hookTargetList = hookTargets(db, actionSealingKey, (err) => log.warn({ err }, 'token hook targets could not be read; the last list stays'));
    invalidation.on('actions', () => hookTargetList.clear());
    const lookupUser = (id: string) => users.get(id);
    const forcedMfa = forcedMfaOf(lookupUser, policies.effective);
    const throttle = await createAuthThrottle(
      { limit: config.authFailureLimit, window: config.authFailureWindow, trustProxy: config.trustProxy },
      redis,
      `${config.redisPrefix}auth-blocks`,
      (err) => log.warn({ err }, 'failed authentication could not be counted'),
    );
    closers.unshift(() => throttle.close());
    const outbound = outboundClient({ allowPrivate: config.outboundAllowPrivate, log });
    closers.unshift(() => outbound.close());
    const hooks = tokenHooks({
      db,
      log,
      outbound,
      lookupUser,
      targets: hookTargetList,
      onCall: (target, outcome, seconds) => metrics.tokenHooks.observe({ target, outcome }, seconds),
    });
    const idps = {
      sealingKey: deriveKey(master.key, 'identity provider secret sealing'),
      fetchFor: providerFetch(outbound),
      upstreams: upstreamCache(),
      ldapFor: ldapFor(config.outboundAllowPrivate),
    };
    const adapter = createAdapterFactory({ db, redis, clients, onStorageError: (store) => metrics.storageErrors.inc({ store }) });
    const external = { ...idps, states: externalLoginStates(adapter('ExternalLoginState')), samlStates: samlLoginStates(adapter('SamlLoginState')) };
    const samlIdp = samlIdentityProvider({
      db,
      issuer: config.issuer,
      sessionLifetime: config.sessionIdleLifetime,
      signingKeys: () => currentKeys,
      adapter,
      hooks,
    });
    const engineDeps = {
      config,
      db,
      exchanges: exchangeOutcomes(adapter('TokenExchangeOutcome')),
      cookieKeys: [deriveKey(master.key, 'cookie signing')],
      secretKey,
      adapter,
      findAccount: accountFinder(db, lookupUser, hooks),
      tokenHooks: hooks,
      forcedMfa,
      lookupUser,
      mayImpersonate: impersonationAllowed(db),
      machineKeys: machineKeys.lookup,
      featureEnabled: (name: FeatureName) => features.get(name),
      onTokenIssued: (grantType: string) => metrics.tokensIssued.inc({ grant_type: grantType }),
      throttle,
      onBackchannelLogout: (result: 'delivered' | 'failed') => metrics.backchannelLogouts.inc({ result }),
      outboundFetch: outbound.fetcher({ trust: 'app' }),
      endSessionRules: [samlIdp.logoutAtEndSession],
    };
    const build = (current: SigningKey[]) => buildProvider({ ...engineDeps, jwks: current.map((k) => k.privateJwk) }, log);
    const engine = new EngineHolder(build(keys));
    const swapKeys = (current: SigningKey[]) => {
      currentKeys = current;
      engine.swap(build(current));
    };
    const keyWatcher = watchSigningKeys(
      { db, sealingKey, retainFor, rotationInterval: config.keyRotationInterval, pollMs: KEY_POLL_MS, log, onChange: swapKeys },
      keys.map((k) => k.kid).join(','),
    );
    closers.unshift(() => keyWatcher.stop());

    const dependencies: Dependency[] = [{ name: db.kind === 'postgres' ? 'postgres' : 'database', ping: () => db.ping() }];
    if (redis) dependencies.push({ name: 'redis', ping: () => redis.ping() });

    const apiVerifiers = [patVerifier(db, secretKey), engineTokenVerifier(engine, lookupUser, engineDeps.exchanges)];
    const consoleBundle = await loadConsoleBundle(log);
    const inFlight = { count: 0 };
    let stopping = false;
    const app = createApp({
      inFlight,
      log,
      metrics,
      issuer: config.issuer,
      trustProxy: config.trustProxy,
      postMethods: config.enableHttpPostMethods,
      engine,
      routers: [
        healthRoutes(dependencies, () => stopping),
        metricsRoutes(metrics),
        pageAssetRoutes(),
        consoleRoutes(consoleBundle, config.issuer),
        adminRouter({
          db,
          log,
          settings: orgSettings,
          verifiers: apiVerifiers,
          secretKey,
          announce,
          engine,
          sessionIdleLifetime: config.sessionIdleLifetime,
          signingKeys: { sealingKey, interval: config.keyRotationInterval, retainFor, refresh: keyWatcher.refresh },
          throttle,
          smtp: { sealingKey: smtpSealingKey, fromEnvironment: smtpFromEnvironment(config) },
          idps,
          appFetch: engineDeps.outboundFetch,
          actionSealingKey,
          sms: { sealingKey: smsSealingKey },
        }),
        scimRouter({ db, log, settings: orgSettings, verifiers: apiVerifiers, announce, engine, throttle, issuer: config.issuer }),
        interactionRouter({
          engine,
          db,
          log,
          orgSettings,
          csrfKey: deriveKey(master.key, 'login form csrf'),
          sessionLifetime: config.sessionIdleLifetime,
          sessionSameSite: sessionCookieSameSite(config),
          onLogin: (result) => metrics.logins.inc({ result }),
          throttle,
          announce,
          policies: policies.effective,
          forcedMfa,
          factorKeys: { sealing: deriveKey(master.key, 'otp secret sealing'), digest: secretKey },
          securityKey: deriveKey(master.key, 'security page cookie'),
          challenges: challengeStore(adapter('WebAuthnChallenge')),
          webauthnRpId: config.webauthnRpId,
          codes: { key: secretKey, issuer: config.issuer },
          external,
        }),
        samlIdp.routes(engine),
        externalCallbackRoutes({ external }),
        samlSpRoutes({ db, log, issuer: config.issuer, ...external }),
      ],
    });
    const { server, connections } = await listen(app, config);

    const housekeeping = startHousekeeping(db, announce, log);
    const onDelivery = (target: string, outcome: string) => metrics.actionDeliveries.inc({ target, outcome });
    const deliveries = startEventDeliveries({ db, log, outbound, sealingKey: actionSealingKey, retry: config, onDelivery });
    const smsFetch = outbound.fetcher({ trust: 'instance' });
    const notifications = startNotifications(db, config, smtpSealingKey, log, metrics, () => effectiveSmsSender(db, smsSealingKey, smsFetch));

    const { port } = server.address() as AddressInfo;
    const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${port}`;

    const stop = gracefulStop({
      server,
      connections,
      inFlight,
      timeoutSeconds: config.shutdownTimeout,
      beforeClose: () => {
        stopping = true;
        housekeeping.stop();
      },
      closers: [() => notifications.stop(), () => deliveries.stop(), ...closers],
    });

    return { server, url, db, redis, engine, stop };
  } catch (err) {
    for (const close of closers) await Promise.resolve(close()).catch(() => {});
    throw err;
  }
}

/** The instance, its first org and admins on the first start (credentials to DATA_DIR), and the console's app on every start. */
async function ensureInstance(db: Database, config: ConfigResult, log: Logger, settings: OrgSettings & { secretKey: Buffer }): Promise<void> {
  const created = await firstStart(db, {
    ...settings,
    instanceOrgName: config.instanceOrgName,
    adminPassword: config.adminPassword,
    dataDir: config.dataDir,
  }).catch((err) => {
    throw err instanceof InvalidArgument ? new ConfigError(`ADMIN_PASSWORD breaks the password policy: ${err.violations[0]?.description ?? err.message}`) : err;
  });
  if (created) {
    log.info(
      { adminLoginName: created.adminLoginName, patFile: created.files.pat, keyFile: created.files.key, passwordFile: created.files.password },
      'first start: created the instance; admin credentials written to DATA_DIR (mode 0600)',
    );
  }
  const consoleApp = await ensureConsoleApp(db, config.issuer);
  if (consoleApp !== 'unchanged') log.info({ consoleApp }, 'the console app is ready');
}

/** The per-node caches of the hot paths, each cleared on every node when a command announces its topic. */
function nodeCaches(db: Database, invalidation: Invalidation, issuer: string) {
  const users = userCache(db);
  invalidation.on('users', () => users.clear());
  const clients = new ClientDirectory(db, issuer);
  invalidation.on('clients', () => clients.clear());
  const machineKeys = machineKeyCache(db);
  invalidation.on('clients', () => machineKeys.clear());
  invalidation.on('users', () => machineKeys.clear());
  const features = featureCache(db);
  invalidation.on('features', () => features.clear());
  const policies = policyCache(db);
  invalidation.on('policies', () => policies.clear());
  return { users, clients, machineKeys, features, policies };
}

interface StopParts {
  server: Server;
  connections: ConnectionTracker;
  inFlight: { count: number };
  timeoutSeconds: number;
  /** Runs first: readiness says "stopping", background work ends. */
  beforeClose(): void;
  /** Pools and clients, closed last, in order. */
  closers: Array<() => Promise<unknown> | unknown>;
}

/**
 * SIGTERM's stop (docs/operations.md): stop accepting, let the requests in
 * flight finish within the timeout, then close the pools. Called twice, it
 * answers the same promise.
 */
function gracefulStop(parts: StopParts): () => Promise<void> {
  const { server, connections, inFlight, closers } = parts;
  let stopped: Promise<void> | undefined;
  return () =>
    (stopped ??= (async () => {
      parts.beforeClose();
      connections.beginStop();
      // net.Server's close stops accepting; http.Server's would also close
      // every idle connection at once, resetting requests clients are
      // sending on them at that instant (http/connections.ts).
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      // Connections that finish their last request become idle: close them
      // soon after, instead of waiting for the client to hang up.
      const reaper = setInterval(() => connections.closeIdle(), 50);
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, parts.timeoutSeconds * 1000).unref());
      await Promise.race([closed, deadline]);
      clearInterval(reaper);
      server.closeAllConnections();
      // A client that hung up leaves its handler running; let handlers
      // finish (within the deadline) before their pools go away.
      const drained = new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (inFlight.count > 0) return;
          clearInterval(poll);
          resolve();
        }, 20);
        poll.unref();
      });
      await Promise.race([drained, deadline]);
      for (const close of closers) await Promise.resolve(close()).catch(() => {});
    })());
}

/** A signing key exists and the schedule is in shape; the keys to publish, and how long a retired one stays published. */
async function prepareSigningKeys(db: Database, sealingKey: Buffer, config: ConfigResult): Promise<{ keys: SigningKey[]; retainFor: number }> {
  await ensureSigningKey(db, sealingKey);
  await advanceSigningKeys(db, sealingKey, { interval: config.keyRotationInterval });
  const retainFor = Math.max(config.idTokenLifetime, config.accessTokenLifetime);
  return { keys: await loadSigningKeys(db, sealingKey, retainFor), retainFor };
}

/** The HTTP server of `app`, listening on PORT and HOST. */
async function listen(app: Parameters<typeof createServer>[1], config: ConfigResult): Promise<{ server: Server; connections: ConnectionTracker }> {
  const server = createServer(app);
  // Node hands CONNECT (RFC 9110 9.3.6) to 'connect' listeners and closes
  // the socket unanswered without one; no path here is a tunnel.
  server.on('connect', (_req, socket) => socket.end('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'));
  const connections = trackConnections(server);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return { server, connections };
}

/** MASTER_KEY, or the generated key file of an embedded trial; a key other than the database's stops the start. */
async function checkedMasterKey(db: Database, config: ConfigResult, log: Logger): Promise<{ key: Buffer }> {
  const master = resolveMasterKey(config.masterKey, config.dataDir);
  if (master.source === 'generated') log.warn({ path: master.path }, 'generated a master key; keep this file, or set MASTER_KEY');
  await verifyMasterKey(db, master.key);
  return master;
}
