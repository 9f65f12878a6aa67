import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { Logger } from '../logger.ts';
import { escapeHtml, PAGE_HEADERS } from '../pages/layout.ts';
import { ROUTES } from '../engine/routes.ts';
import { CONSOLE_CLIENT_ID, CONSOLE_PATH, consoleRedirectUri } from '../commands/console-app.ts';

// The web console (README, "Console"): one page that loads one script and
// one style sheet from this origin, built from console/ by esbuild. The
// page gets its settings as data attributes, so it runs under the same CSP
// as the login pages (no inline script or style), with connect-src 'self'
// for its calls of the token endpoint and the API.

/** From src/http/ (or dist/src/http/ when built) to the bundle beside the sources: console/bundle (or dist/console/bundle). */
const BUNDLE_DIR = fileURLToPath(new URL('../../console/bundle/', import.meta.url));
const BUILD_SCRIPT = fileURLToPath(new URL('../../console/build.ts', import.meta.url));
const SOURCES = fileURLToPath(new URL('../../console/src/', import.meta.url));

/** Newest change of the console's sources (0 where they are not, as in the built image). */
function sourcesChangedAt(dir = SOURCES): number {
  if (!existsSync(dir)) return 0;
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? sourcesChangedAt(path) : statSync(path).mtimeMs;
    }),
  );
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

export const CONSOLE_HEADERS: Record<string, string> = {
  ...PAGE_HEADERS,
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  brotli: Buffer;
}

export interface ConsoleBundle {
  script: string;
  style: string;
  assets: Map<string, Asset>;
}

function readBundle(dir: string): ConsoleBundle {
  const manifest = JSON.parse(readFileSync(`${dir}manifest.json`, 'utf8')) as { script: string; style: string };
  const assets = new Map<string, Asset>();
  for (const [name, type] of [
    [manifest.script, 'text/javascript; charset=utf-8'],
    [manifest.style, 'text/css; charset=utf-8'],
  ] as const) {
    assets.set(name, { type, body: readFileSync(`${dir}${name}`), gzip: readFileSync(`${dir}${name}.gz`), brotli: readFileSync(`${dir}${name}.br`) });
  }
  return { script: manifest.script, style: manifest.style, assets };
}

/**
 * The built console; built now when it is missing, or older than its
 * sources, and the sources are here (a checkout run with `npm start`).
 * Undefined when it can be neither found nor built: the service runs, and
 * the console's path says why it is not there.
 */
export async function loadConsoleBundle(log: Logger, dir = BUNDLE_DIR): Promise<ConsoleBundle | undefined> {
  const manifest = `${dir}manifest.json`;
  if (!existsSync(manifest) || statSync(manifest).mtimeMs < sourcesChangedAt()) {
    if (!existsSync(BUILD_SCRIPT)) {
      log.error({ dir }, 'the console is not built (npm run build); /ui/console answers 503');
      return undefined;
    }
    try {
      const { buildConsole } = (await import(BUILD_SCRIPT)) as typeof import('../../console/build.ts');
      await buildConsole(dir);
      log.info({ dir }, 'built the console');
    } catch (err) {
      log.error({ err, dir }, 'building the console failed; /ui/console answers 503');
      return undefined;
    }
  }
  return readBundle(dir);
}

function indexPage(bundle: ConsoleBundle, issuer: string): string {
  const data: Record<string, string> = {
    base: CONSOLE_PATH,
    issuer,
    'client-id': CONSOLE_CLIENT_ID,
    'authorization-endpoint': `${issuer}${ROUTES.authorization}`,
    'token-endpoint': `${issuer}${ROUTES.token}`,
    'end-session-endpoint': `${issuer}${ROUTES.end_session}`,
    'redirect-uri': consoleRedirectUri(issuer),
    'post-logout-redirect-uri': `${issuer}${CONSOLE_PATH}/`,
  };
  const attributes = Object.entries(data)
    .map(([key, value]) => ` data-${key}="${escapeHtml(value)}"`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Portcullis console</title>
<link rel="stylesheet" href="${CONSOLE_PATH}/assets/${bundle.style}">
<script type="module" src="${CONSOLE_PATH}/assets/${bundle.script}"></script>
</head>
<body${attributes}>
<div id="console"><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>
`;
}

/** `/ui/console/` and every path below it: the page (the console routes in the browser); `/ui/console/assets/*`: its files. */
export function consoleRoutes(bundle: ConsoleBundle | undefined, issuer: string): Router {
  // strict: /ui/console and /ui/console/ are two paths here, the first one redirecting to the second.
  const router = new Router({ strict: true });
  const page = bundle ? indexPage(bundle, issuer) : undefined;
  router.get(CONSOLE_PATH, (ctx) => {
    ctx.status = 308;
    ctx.redirect(`${CONSOLE_PATH}/`);
  });
  router.get(`${CONSOLE_PATH}/assets/:name`, (ctx) => {
    const asset = bundle?.assets.get(ctx.params.name!);
    if (!asset) return;
    const encoding = ctx.acceptsEncodings('br', 'gzip', 'identity');
    ctx.set({ 'Cache-Control': IMMUTABLE, 'X-Content-Type-Options': 'nosniff', Vary: 'Accept-Encoding' });
    ctx.type = asset.type;
    if (encoding === 'br' || encoding === 'gzip') ctx.set('Content-Encoding', encoding);
    ctx.body = encoding === 'br' ? asset.brotli : encoding === 'gzip' ? asset.gzip : asset.body;
  });
  router.get(`${CONSOLE_PATH}/{*rest}`, (ctx) => {
    ctx.set(CONSOLE_HEADERS);
    if (!page) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The console is not built: run npm run build (or npm install) and restart.';
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });
  return router;
}
