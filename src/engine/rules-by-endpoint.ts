import type { KoaContextWithOIDC } from 'oidc-provider';
import { DISCOVERY_PATH, ROUTES } from './routes.ts';

export type EngineRule = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>;
export type Endpoint = keyof typeof ROUTES | 'discovery';

// Endpoints whose sub-paths belong to them: the engine resumes an
// authorization at /authorize/:uid and confirms a logout at /end_session/confirm.
const FAMILIES: Endpoint[] = ['authorization', 'end_session'];

function pathOfEndpoint(endpoint: Endpoint): string {
  return endpoint === 'discovery' ? DISCOVERY_PATH : ROUTES[endpoint];
}

/** The rules as one middleware, run in the order given. */
function chain(rules: EngineRule[]): EngineRule {
  return rules.reduceRight<EngineRule>((inner, rule) => (ctx, next) => rule(ctx, () => inner(ctx, next)), (_ctx, next) => next());
}

/**
 * Our rules around the engine's endpoints as one engine middleware: each
 * endpoint's rules are chained once, and a request runs only those of the
 * endpoint its path names, instead of passing every rule's own "is this
 * mine?" check (the token and introspection endpoints are the hot paths).
 */
export function rulesByEndpoint(rules: Partial<Record<Endpoint, EngineRule[]>>): EngineRule {
  const byPath = new Map<string, EngineRule>();
  for (const [endpoint, list] of Object.entries(rules) as [Endpoint, EngineRule[]][]) byPath.set(pathOfEndpoint(endpoint), chain(list));
  const families = FAMILIES.filter((endpoint) => rules[endpoint]).map((endpoint) => [`${pathOfEndpoint(endpoint)}/`, byPath.get(pathOfEndpoint(endpoint))!] as const);
  return (ctx, next) => {
    const rule = byPath.get(ctx.path) ?? families.find(([prefix]) => ctx.path.startsWith(prefix))?.[1];
    return rule ? rule(ctx, next) : next();
  };
}
