import Router from '@koa/router';

export interface Dependency {
  name: string;
  ping(): Promise<unknown>;
}

const PING_TIMEOUT_MS = 2000;

async function check(dependency: Dependency): Promise<'ok' | 'unreachable'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), PING_TIMEOUT_MS);
  });
  try {
    await Promise.race([dependency.ping(), timeout]);
    return 'ok';
  } catch {
    return 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/healthz`: the process answers. `/readyz`: every storage dependency
 * answers too, and the node is not stopping (a load balancer then drains it,
 * even over a connection it keeps alive).
 */
export function healthRoutes(dependencies: Dependency[], stopping: () => boolean = () => false): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (stopping()) {
      ctx.status = 503;
      ctx.body = { status: 'stopping' };
      return;
    }
    const results = await Promise.all(dependencies.map(async (d) => [d.name, await check(d)] as const));
    const checks = Object.fromEntries(results);
    const ready = results.every(([, state]) => state === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'unavailable', checks };
  });
  return router;
}
