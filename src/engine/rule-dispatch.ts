import type { KoaContextWithOIDC } from 'oidc-provider';
import { DISCOVERY_PATH, END_SESSION_PATHS, ROUTES } from './routes.ts';

export type EngineRule = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>;

/**
 * Where our rules hook into the engine: its endpoints, discovery, and the
 * sub-paths it answers itself — resuming an authorization at
 * /authorize/:uid or a device sign-in at /ui/login/device/:uid, confirming
 * and finishing a logout.
 */
export type RulePoint = keyof typeof ROUTES | 'discovery' | 'resume' | 'device_resume' | 'end_session_confirm' | 'end_session_success';

type ResumePoint = 'resume' | 'device_resume';
const EXACT_PATHS: Record<Exclude<RulePoint, ResumePoint>, string> = {
  ...ROUTES,
  discovery: DISCOVERY_PATH,
  ...END_SESSION_PATHS,
};
/** The points whose path is a prefix and a uid. */
const RESUME_PREFIXES: Record<ResumePoint, string> = { resume: `${ROUTES.authorization}/`, device_resume: `${ROUTES.code_verification}/` };

/** The rules as one middleware, run in the order given. */
function chain(rules: EngineRule[]): EngineRule {
  return rules.reduceRight<EngineRule>(
    (inner, rule) => (ctx, next) => rule(ctx, () => inner(ctx, next)),
    (_ctx, next) => next(),
  );
}

/**
 * Our rules around the engine's endpoints as one engine middleware: each
 * point's rules are chained once, and a request runs only those of the
 * point its path names (the token and introspection endpoints are the hot
 * paths). Only exact paths get here (src/http/engine-paths.ts), so a rule
 * never checks the path itself, only the method where that matters.
 */
export function rulesByEndpoint(rules: Partial<Record<RulePoint, EngineRule[]>>): EngineRule {
  const byPath = new Map<string, EngineRule>();
  const byPrefix: Array<[string, EngineRule]> = [];
  for (const [point, list] of Object.entries(rules) as [RulePoint, EngineRule[]][]) {
    if (point === 'resume' || point === 'device_resume') byPrefix.push([RESUME_PREFIXES[point], chain(list)]);
    else byPath.set(EXACT_PATHS[point], chain(list));
  }
  return (ctx, next) => {
    const rule = byPath.get(ctx.path) ?? byPrefix.find(([prefix]) => ctx.path.startsWith(prefix))?.[1];
    return rule ? rule(ctx, next) : next();
  };
}
