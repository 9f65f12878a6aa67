import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import type { Principal } from '../domain/roles.ts';
import { getUser, listMachineKeys, listPersonalAccessTokens, listUserGrants } from '../queries/get-user.ts';
import type { HumanInput, OrgSettings } from '../commands/setup-org.ts';
import { addHumanUser } from '../commands/add-human.ts';
import { addMachineUser, type MachineInput } from '../commands/add-machine.ts';
import {
  issueMachineKey,
  issueMachineSecret,
  issuePersonalAccessToken,
  revokeMachineKey,
  revokeMachineSecret,
  revokePersonalAccessToken,
  type AddKeyInput,
  type AddPatInput,
} from '../commands/machine-credentials.ts';
import { removeUser } from '../commands/remove-user.ts';
import { unlockUser } from '../commands/unlock-user.ts';
import { endUserSession, endUserSessions } from '../commands/end-user-sessions.ts';
import { listUserSessions } from '../queries/user-sessions.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import { removeUserOtp } from '../commands/otp.ts';
import { removeUserCodeFactor } from '../commands/code-factors.ts';
import { removeUserPasskey } from '../commands/passkeys.ts';
import { listAuthFactors } from '../queries/auth-factors.ts';
import { addUserGrant, changeUserGrant, removeUserGrant, type UserGrantInput } from '../commands/user-grants.ts';
import { changeProfile, changeUserName, type ProfileInput } from '../commands/change-user.ts';
import { deactivateUser, lockUser, reactivateUser } from '../commands/user-state.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { humanSchema } from './schemas.ts';
import { parseWithPasswordRule } from './password-rule.ts';
import { orgPasswordPolicy } from '../queries/password-policy.ts';
import {
  emptySchema,
  futureDate,
  machineKeySchema,
  machineSchema,
  patSchema,
  profileSchema,
  userGrantChangeSchema,
  userGrantSchema,
  userNameSchema,
} from './user-schemas.ts';

const expirationDate = futureDate('expirationDate');
const parseMachine = validator<MachineInput>(machineSchema);
const parseKey = validator<AddKeyInput>(machineKeySchema, (body) => expirationDate(body.expirationDate));
const parseEmpty = validator<Record<string, never>>(emptySchema);
const parsePat = validator<AddPatInput>(patSchema, (body) => expirationDate(body.expirationDate));
const parseGrant = validator<UserGrantInput>(userGrantSchema);
const parseGrantChange = validator<{ roleKeys: string[] }>(userGrantChangeSchema);
const parseProfile = validator<ProfileInput>(profileSchema);
const parseUserName = validator<{ userName: string }>(userNameSchema);

const principal = (ctx: Context) => ctx.state.principal as Principal;

/**
 * Users of the acting org (docs/api/users.md): humans and machines, their
 * profile and login name, their state (lock, deactivate), a
 * machine's keys, client secret and PATs, removal, project grants, and a
 * user's sessions (listed, one or all ended). `secretKey` keys the digests
 * of the secrets handed out here; `sessionIdleLifetime` dates a session's
 * last activity.
 */
export function userRoutes(
  db: Database,
  announce: Announce,
  settings: OrgSettings,
  secretKey: Buffer,
  engine: EngineHolder,
  sessionIdleLifetime: number,
): Router {
  const parseHuman = validator<HumanInput>(humanSchema);
  const router = new Router({ prefix: '/management/v1/users' });

  router.post('/human', async (ctx) => {
    const orgId = await actingOrgId(ctx, db);
    const body = ctx.request.body as { password?: unknown } | undefined;
    const policy = await orgPasswordPolicy(db, settings.passwordComplexity, orgId);
    const input = parseWithPasswordRule(parseHuman, body, { policy, field: 'password', value: body?.password });
    const codes = { key: secretKey, issuer: engine.provider.issuer };
    ctx.body = await addHumanUser(db, settings, codes, principal(ctx), orgId, input);
  });
  router.post('/machine', async (ctx) => {
    const input = parseMachine(ctx.request.body);
    ctx.body = await addMachineUser(db, principal(ctx), await actingOrgId(ctx, db), input);
  });

  router.get('/:userId', async (ctx) => {
    ctx.body = { user: await getUser(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!) };
  });
  router.delete('/:userId', async (ctx) => {
    ctx.body = await removeUser(db, announce, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.post('/:userId/_unlock', async (ctx) => {
    parseEmpty(ctx.request.body ?? {});
    ctx.body = await unlockUser(db, announce, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });

  router.put('/:userId/profile', async (ctx) => {
    const input = parseProfile(ctx.request.body);
    ctx.body = await changeProfile(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  router.put('/:userId/username', async (ctx) => {
    const input = parseUserName(ctx.request.body);
    ctx.body = await changeUserName(db, announce, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  for (const [path, change] of [
    ['_deactivate', deactivateUser],
    ['_reactivate', reactivateUser],
    ['_lock', lockUser],
  ] as const) {
    router.post(`/:userId/${path}`, async (ctx) => {
      parseEmpty(ctx.request.body ?? {});
      ctx.body = await change(db, announce, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
    });
  }

  router.get('/:userId/auth_factors', async (ctx) => {
    ctx.body = await listAuthFactors(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.delete('/:userId/auth_factors/otp', async (ctx) => {
    ctx.body = await removeUserOtp(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  for (const [path, channel] of [
    ['otp_email', 'email'],
    ['otp_sms', 'sms'],
  ] as const) {
    router.delete(`/:userId/auth_factors/${path}`, async (ctx) => {
      ctx.body = await removeUserCodeFactor(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, channel);
    });
  }
  router.delete('/:userId/passkeys/:passkeyId', async (ctx) => {
    ctx.body = await removeUserPasskey(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, ctx.params.passkeyId!);
  });

  router.post('/:userId/keys', async (ctx) => {
    const input = parseKey(ctx.request.body);
    ctx.body = await issueMachineKey(db, announce, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  router.delete('/:userId/sessions', async (ctx) => {
    ctx.body = await endUserSessions(db, engine, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.get('/:userId/sessions', async (ctx) => {
    ctx.body = await listUserSessions(db, engine, sessionIdleLifetime, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.delete('/:userId/sessions/:sessionId', async (ctx) => {
    ctx.body = await endUserSession(db, engine, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, ctx.params.sessionId!);
  });

  router.get('/:userId/keys', async (ctx) => {
    ctx.body = await listMachineKeys(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.delete('/:userId/keys/:keyId', async (ctx) => {
    ctx.body = await revokeMachineKey(db, announce, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, ctx.params.keyId!);
  });

  router.put('/:userId/secret', async (ctx) => {
    parseEmpty(ctx.request.body ?? {});
    ctx.body = await issueMachineSecret(db, announce, secretKey, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.delete('/:userId/secret', async (ctx) => {
    ctx.body = await revokeMachineSecret(db, announce, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });

  router.post('/:userId/pats', async (ctx) => {
    const input = parsePat(ctx.request.body ?? {});
    ctx.body = await issuePersonalAccessToken(db, secretKey, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  router.get('/:userId/pats', async (ctx) => {
    ctx.body = await listPersonalAccessTokens(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.delete('/:userId/pats/:tokenId', async (ctx) => {
    ctx.body = await revokePersonalAccessToken(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, ctx.params.tokenId!);
  });

  router.post('/:userId/grants', async (ctx) => {
    const input = parseGrant(ctx.request.body);
    ctx.body = await addUserGrant(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  router.get('/:userId/grants', async (ctx) => {
    ctx.body = await listUserGrants(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.put('/:userId/grants/:grantId', async (ctx) => {
    const input = parseGrantChange(ctx.request.body);
    ctx.body = await changeUserGrant(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, ctx.params.grantId!, input);
  });
  router.delete('/:userId/grants/:grantId', async (ctx) => {
    ctx.body = await removeUserGrant(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, ctx.params.grantId!);
  });

  return router;
}
