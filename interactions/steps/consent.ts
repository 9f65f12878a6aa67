import type { Context } from 'koa';
import { addGrantableScopes } from '../../src/engine/api-scope.ts';
import { saveGrantChange } from '../../src/engine/first-party-grant.ts';
import type { InteractionKit, Loaded } from '../context.ts';

/**
 * First-party apps skip the consent screen: the grant gets whatever the
 * engine says is missing, and the flow continues without a page.
 */
export function consentStep(kit: InteractionKit): (ctx: Context, loaded: Loaded) => Promise<void> {
  return async (ctx, loaded) => {
    const { provider, interaction } = loaded;
    const accountId = interaction.session?.accountId;
    const clientId = (interaction.params as Record<string, string>).client_id;
    const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
    const grant = existing ?? new provider.Grant({ accountId, clientId });
    const missing = interaction.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    const grantId = await saveGrantChange(grant, Boolean(existing), () => {
      addGrantableScopes(grant, loaded.client, missing.missingOIDCScope ?? []);
      if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
    });
    await kit.finish(ctx, loaded, { consent: { grantId } });
  };
}
