import type Provider from 'oidc-provider';
import { errors, type FindAccount, type KoaContextWithOIDC } from 'oidc-provider';
import { KNOWN_SCOPES } from '../claims.ts';
import { MACHINE_KEY_CLAIM } from '../key-bound-tokens.ts';

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
  issued_token_type?: string;
}

/** The `scope` parameter: required, space-delimited, only scopes this service knows. */
export function requestedScope(ctx: KoaContextWithOIDC): string[] {
  const raw = ctx.oidc.params!.scope;
  if (typeof raw !== 'string' || !raw.trim()) throw new errors.InvalidRequest('missing required parameter scope');
  const scopes = [...new Set(raw.split(' ').filter(Boolean))];
  const unknown = scopes.find((scope) => !KNOWN_SCOPES.has(scope));
  if (unknown) throw new errors.InvalidScope(`unknown scope ${unknown}`, unknown);
  return scopes;
}

export interface IssueOptions {
  accountId: string;
  scope: string[];
  gty: string;
  idToken: boolean;
  findAccount: FindAccount;
  /** The machine key that authenticated the request; the token ends with it. */
  machineKeyId?: string;
}

/**
 * An access token for `accountId`, stored with a Grant (userinfo and
 * introspection check it), and the account's ID token when asked for.
 */
export async function issueAccessToken(ctx: KoaContextWithOIDC, options: IssueOptions): Promise<TokenResponse> {
  const provider = ctx.oidc.provider as Provider;
  const client = ctx.oidc.client!;
  const scope = options.scope.join(' ');
  const grant = new provider.Grant({ accountId: options.accountId, clientId: client.clientId });
  grant.addOIDCScope(scope);
  const grantId = await grant.save();
  const token = new provider.AccessToken({ accountId: options.accountId, client, grantId, gty: options.gty, scope });
  if (options.machineKeyId) (token as unknown as Record<string, string>)[MACHINE_KEY_CLAIM] = options.machineKeyId;
  ctx.oidc.entity('AccessToken', token);
  const accessToken = await token.save();
  const response: TokenResponse = { access_token: accessToken, token_type: 'Bearer', expires_in: token.expiration, scope };
  if (options.idToken) {
    const account = await options.findAccount(ctx, options.accountId);
    if (!account) throw new errors.InvalidGrant('the user no longer exists');
    const claims = await account.claims('id_token', scope, {}, []);
    const idToken = new provider.IdToken({ ...claims, sub: options.accountId }, { ctx, client });
    (idToken as unknown as { scope: string }).scope = scope;
    idToken.set('at_hash', accessToken);
    response.id_token = await idToken.issue({ use: 'idtoken' });
  }
  return response;
}
