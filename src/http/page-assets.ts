import Router from '@koa/router';
import { PAGE_ASSETS } from '../pages/layout.ts';

// Named by their content's hash, so a path never changes its content.
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The style sheet and script of the pages the service renders (src/engine/pages.ts). */
export function pageAssetRoutes(): Router {
  const router = new Router();
  for (const asset of Object.values(PAGE_ASSETS)) {
    router.get(asset.path, (ctx) => {
      ctx.set({ 'Cache-Control': IMMUTABLE, 'X-Content-Type-Options': 'nosniff' });
      ctx.type = asset.type;
      ctx.body = asset.body;
    });
  }
  return router;
}
