import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import type { FieldViolation } from '../domain/errors.ts';
import { passwordPolicyViolation, type PasswordPolicy } from '../domain/password-policy.ts';
import { setupOrg, type OrgSettings, type SetupOrgInput } from '../commands/setup-org.ts';
import { validator } from './validate.ts';
import { setupOrgSchema } from './schemas.ts';

/** The password policy as a field rule, so it is reported with the schema's violations. */
export function passwordRule(policy: PasswordPolicy, field: string) {
  return (password: unknown): FieldViolation[] => {
    const violation = typeof password === 'string' ? passwordPolicyViolation(password, policy) : undefined;
    return violation ? [{ field, description: violation }] : [];
  };
}

/** `POST /admin/v1/orgs/_setup` (docs/api/orgs.md). */
export function orgRoutes(db: Database, settings: OrgSettings): Router {
  const password = passwordRule(settings.passwordPolicy, 'human.password');
  const parseSetupOrg = validator<SetupOrgInput>(setupOrgSchema, (body) => password(body.human?.password));
  const router = new Router();
  router.post('/admin/v1/orgs/_setup', async (ctx) => {
    const input = parseSetupOrg(ctx.request.body);
    ctx.body = await setupOrg(db, settings, ctx.state.principal as Principal, input);
  });
  return router;
}
