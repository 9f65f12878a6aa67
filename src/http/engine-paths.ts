import { DISCOVERY_PATH, END_SESSION_PATHS, ENGINE_PATHS, ROUTES } from '../engine/routes.ts';

/**
 * The engine's router folds letter case, drops a trailing slash and decodes
 * parameters, so it serves one endpoint under many spellings; our rules
 * (client authentication per endpoint, introspection fields, NUL checks,
 * logout revocation) are picked by the exact path. So the door lets only the
 * exact spellings through to the engine, and anything that merely looks like
 * an engine path is a 404 (docs/security.md, "One spelling per endpoint").
 */

/** The engine resumes an authorization at /authorize/:uid, a device sign-in at /ui/login/device/:uid; uids are nanoids. */
const RESUME = new RegExp(`^(${ROUTES.authorization}|${ROUTES.code_verification})/[A-Za-z0-9_-]{1,64}$`);

/** Where the engine's routes live; a path whose canonical form starts here is the engine's. */
const ENGINE_SPACES = ['/oauth', '/oidc', '/.well-known'];

export type EngineDoor = 'engine' | 'not-found' | 'ours';

// The methods the engine answers on each path (its router: GET also serves
// HEAD; OPTIONS is the CORS preflight of the endpoints apps call from
// browsers). Another method on these paths is 405 (RFC 9110 15.5.6).
const GET = ['GET', 'HEAD'];
/** Served with POST only while ENABLE_HTTP_POST_METHODS is on (the engine's enableHttpPostMethods). */
const POST_OPTIONAL: ReadonlySet<string> = new Set([ROUTES.authorization, ROUTES.end_session]);
const METHODS = new Map<string, readonly string[]>([
  [ROUTES.authorization, [...GET, 'POST']],
  [ROUTES.token, ['POST', 'OPTIONS']],
  [ROUTES.introspection, ['POST', 'OPTIONS']],
  [ROUTES.revocation, ['POST', 'OPTIONS']],
  [ROUTES.jwks, [...GET, 'OPTIONS']],
  [ROUTES.userinfo, [...GET, 'POST', 'OPTIONS']],
  [ROUTES.end_session, [...GET, 'POST']],
  [END_SESSION_PATHS.end_session_confirm, ['POST']],
  [END_SESSION_PATHS.end_session_success, GET],
  [DISCOVERY_PATH, [...GET, 'OPTIONS']],
  [ROUTES.pushed_authorization_request, ['POST', 'OPTIONS']],
  [ROUTES.device_authorization, ['POST', 'OPTIONS']],
  [ROUTES.code_verification, [...GET, 'POST']],
]);

/** Paths the engine answers, exactly as it publishes them; every one has its methods above. */
const EXACT: ReadonlySet<string> = new Set(ENGINE_PATHS);

/**
 * The methods an engine path takes, when the method of a request is not one
 * of them. `postMethods`: POST at authorization and end_session is served.
 */
export function methodsIfNotAllowed(method: string, target: string, postMethods = false): readonly string[] | undefined {
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  const allowed = RESUME.test(path) || (!postMethods && POST_OPTIONAL.has(path)) ? GET : METHODS.get(path);
  return allowed && !allowed.includes(method) ? allowed : undefined;
}

/** Percent-decoded (as often as it still changes, bounded), lower-cased, slashes collapsed, dot segments and trailing slashes removed. */
export function canonicalPath(path: string): string {
  let decoded = path;
  for (let i = 0; i < 3; i += 1) {
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      break;
    }
    if (next === decoded) break;
    decoded = next;
  }
  const segments: string[] = [];
  for (const segment of decoded.toLowerCase().replaceAll('\\', '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/**
 * The engine's device user-code page sits among our login pages: its other
 * spellings, and what lies under it, are the engine's too. A login page's
 * uid that merely begins with "device" goes on with more uid characters.
 */
const DEVICE_SPACE = new RegExp(`^${ROUTES.code_verification}(?![a-z0-9_-])`);

function inEngineSpace(canonical: string): boolean {
  return ENGINE_SPACES.some((space) => canonical === space || canonical.startsWith(`${space}/`)) || DEVICE_SPACE.test(canonical);
}

/**
 * Who answers a request target: the engine (an exact engine path), nobody
 * (another spelling of an engine path: 404), or our own routers.
 */
export function engineDoor(target: string): EngineDoor {
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  if (EXACT.has(path) || RESUME.test(path)) return 'engine';
  // An absolute-form target ("http://host/oauth/...") is routed by its path by the engine too.
  const pathPart = path.startsWith('/') ? path : (URL.parse(path)?.pathname ?? path);
  return inEngineSpace(canonicalPath(pathPart)) ? 'not-found' : 'ours';
}
