import type { IncomingMessage, ServerResponse } from 'node:http';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ENGINE_PATHS, ROUTES } from '../engine/routes.ts';
import { pathOf } from '../request-context.ts';

/** The service's Prometheus metrics (docs/operations.md), in one registry per process. */
export interface Metrics {
  registry: Registry;
  tokensIssued: Counter<'grant_type'>;
  logins: Counter<'result'>;
  storageErrors: Counter<'store'>;
  backchannelLogouts: Counter<'result'>;
  notifications: Counter<'outcome'>;
  actionDeliveries: Counter<'target' | 'outcome'>;
  tokenHooks: Histogram<'target' | 'outcome'>;
}

const KNOWN_PATHS = new Set<string>([...ENGINE_PATHS, '/healthz', '/readyz', '/metrics']);
const RESUME_PREFIX = `${ROUTES.authorization}/`;

/**
 * A route label of bounded cardinality: the fixed endpoints by path, the
 * engine's resume path and our routes by their pattern, anything else as
 * "other" (so random paths cannot blow up the series count).
 */
function routeLabel(path: string, matched: string | undefined): string {
  if (KNOWN_PATHS.has(path)) return path;
  if (matched) return matched;
  // The door (src/http/engine-paths.ts) lets only well-formed resume paths through to the engine.
  if (path.startsWith(RESUME_PREFIX) && !path.includes('/', RESUME_PREFIX.length)) return `${RESUME_PREFIX}:uid`;
  return 'other';
}

export function createMetrics(currentKeyActivatedAt: () => Date | undefined): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics: Metrics = {
    registry,
    tokensIssued: new Counter({
      name: 'portcullis_tokens_issued_total',
      help: 'Access tokens issued, by grant type',
      labelNames: ['grant_type'],
      registers: [registry],
    }),
    logins: new Counter({ name: 'portcullis_logins_total', help: 'Password logins at the login UI, by result', labelNames: ['result'], registers: [registry] }),
    storageErrors: new Counter({
      name: 'portcullis_storage_errors_total',
      help: 'Failed storage operations of the engine, by store',
      labelNames: ['store'],
      registers: [registry],
    }),
    backchannelLogouts: new Counter({
      name: 'portcullis_backchannel_logouts_total',
      help: 'Back-channel logout token deliveries, by result (failed: no 200/204 after three attempts)',
      labelNames: ['result'],
      registers: [registry],
    }),
    notifications: new Counter({
      name: 'portcullis_notification_deliveries_total',
      help: 'Mail delivery attempts, by outcome (sent; retried: failed, tried again later; failed: given up)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    // Targets are made by the instance's owner only, so their ids keep the series bounded.
    actionDeliveries: new Counter({
      name: 'portcullis_action_deliveries_total',
      help: 'Event delivery attempts to action targets, by target id and outcome (delivered; retried: failed, tried again later; failed: given up)',
      labelNames: ['target', 'outcome'],
      registers: [registry],
    }),
    tokenHooks: new Histogram({
      name: 'portcullis_token_hook_duration_seconds',
      help: 'Token hook calls (preuserinfo, preaccesstoken, presamlresponse), by target id and outcome (ok, timeout, unreachable, http_error, invalid_answer, write_failed)',
      labelNames: ['target', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'portcullis_signing_key_age_seconds',
    help: 'Seconds since the current signing key started signing',
    registers: [registry],
    collect() {
      const since = currentKeyActivatedAt();
      if (since) this.set((Date.now() - since.getTime()) / 1000);
    },
  });
  return metrics;
}

/** The route pattern @koa/router matched for a request of ours, for its label. */
const matchedRoutes = new WeakMap<IncomingMessage, string>();

/** Remembers the route pattern our routers matched (a Koa middleware around them). */
export const recordMatchedRoute: Middleware = async (ctx, next) => {
  try {
    await next();
  } finally {
    if (typeof ctx._matchedRoute === 'string') matchedRoutes.set(ctx.req, ctx._matchedRoute);
  }
};

/** Counts and times every request, including those the engine answers itself. */
export function requestMetrics(metrics: Metrics): (req: IncomingMessage, res: ServerResponse) => void {
  const labels = ['route', 'method', 'status'] as const;
  const requests = new Counter({
    name: 'portcullis_http_requests_total',
    help: 'HTTP requests, by route, method and status',
    labelNames: labels,
    registers: [metrics.registry],
  });
  const duration = new Histogram({
    name: 'portcullis_http_request_duration_seconds',
    help: 'HTTP request latency, by route, method and status',
    labelNames: labels,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics.registry],
  });
  return (req, res) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const value = { route: routeLabel(pathOf(req), matchedRoutes.get(req)), method: req.method ?? 'GET', status: String(res.statusCode) };
      requests.inc(value);
      duration.observe(value, Number(process.hrtime.bigint() - started) / 1e9);
    });
  };
}

export function metricsRoutes(metrics: Metrics): Router {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}
