import type Provider from 'oidc-provider';
import type { FindAccount, KoaContextWithOIDC } from 'oidc-provider';
import { invalidGrant } from '../oauth-errors.ts';
import { MACHINE_KEY_CLAIM } from '../key-bound-tokens.ts';
import { singleTokenGrantId } from '../../../adapters/index.ts';
import { bindToDpopProof } from './dpop.ts';

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
  issued_token_type?: string;
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

interface SavedGrant {
  id: string;
  /** Seconds the grant lives: records kept under its id live as long. */
  lifetime: number;
}

type AccessToken = InstanceType<Provider['AccessToken']>;

/**
 * A new access token (not yet saved) and the saved grant it hangs on, which
 * userinfo and introspection check. A grant that a refresh token will extend
 * (`refreshable`) keeps the engine's Grant lifetime. Any other grant serves
 * this one token: it gets the token's lifetime and a single-token id, so it
 * is stored beside the token and expires with it.
 */
export async function tokenOnNewGrant(
  provider: Provider,
  options: { accountId: string; client: NonNullable<KoaContextWithOIDC['oidc']['client']>; gty: string; scope: string; refreshable: boolean },
): Promise<{ token: AccessToken; grant: SavedGrant }> {
  const { accountId, client, gty, scope } = options;
  const newToken = (grantId: string) => new provider.AccessToken({ accountId, client, grantId, gty, scope });
  if (options.refreshable) {
    const grant = await saveGrant(provider, { accountId, clientId: client.clientId, scope });
    return { token: newToken(grant.id), grant };
  }
  const { token, saveItsGrant } = tokenOnItsOwnGrant(provider, options);
  return { token, grant: await saveItsGrant() };
}

/**
 * A new access token on a grant of its own (single-token id, the token's
 * lifetime), not saved yet; the grant is saved by `saveItsGrant`, which a
 * caller may run beside the token's save so both writes reach the store
 * together.
 */
function tokenOnItsOwnGrant(
  provider: Provider,
  options: { accountId: string; client: NonNullable<KoaContextWithOIDC['oidc']['client']>; gty: string; scope: string },
): { token: AccessToken; saveItsGrant: () => Promise<SavedGrant> } {
  const { accountId, client, gty, scope } = options;
  const token = new provider.AccessToken({ accountId, client, grantId: singleTokenGrantId(), gty, scope });
  const saveItsGrant = () => saveGrant(provider, { accountId, clientId: client.clientId, scope, jti: token.grantId, expiresIn: token.expiration });
  return { token, saveItsGrant };
}

async function saveGrant(
  provider: Provider,
  fields: { accountId: string; clientId: string; scope: string; jti?: string; expiresIn?: number },
): Promise<SavedGrant> {
  const { scope, ...payload } = fields;
  const grant = new provider.Grant(payload as ConstructorParameters<typeof provider.Grant>[0]);
  grant.addOIDCScope(scope);
  const id = await grant.save();
  return { id, lifetime: (grant as unknown as { expiration: number }).expiration };
}

/**
 * An access token for `accountId`, on a grant of its own that ends with it,
 * and the account's ID token when asked for.
 */
export async function issueAccessToken(ctx: KoaContextWithOIDC, options: IssueOptions): Promise<TokenResponse> {
  const provider = ctx.oidc.provider as Provider;
  const client = ctx.oidc.client!;
  const scope = options.scope.join(' ');
  const { token, saveItsGrant } = tokenOnItsOwnGrant(provider, { accountId: options.accountId, client, gty: options.gty, scope });
  if (options.machineKeyId) (token as unknown as Record<string, string>)[MACHINE_KEY_CLAIM] = options.machineKeyId;
  const tokenType = await bindToDpopProof(ctx, token);
  ctx.oidc.entity('AccessToken', token);
  // A token saved without its grant (the grant's write failed) is found by no one: the engine checks the grant.
  const [accessToken] = await Promise.all([token.save(), saveItsGrant()]);
  const response: TokenResponse = { access_token: accessToken, token_type: tokenType, expires_in: token.expiration, scope };
  if (options.idToken) response.id_token = await mintIdToken(ctx, { accountId: options.accountId, scope, findAccount: options.findAccount, accessToken });
  return response;
}

/**
 * The one way our grants mint an ID token: the account's claims of `scope`
 * for the calling client, with `at_hash` of the access token issued beside
 * it and `act` when someone acts for the account (RFC 8693 4.1).
 */
export async function mintIdToken(
  ctx: KoaContextWithOIDC,
  options: { accountId: string; scope: string; findAccount: FindAccount; accessToken?: string; act?: { sub: string } },
): Promise<string> {
  const provider = ctx.oidc.provider as Provider;
  const account = await options.findAccount(ctx, options.accountId);
  if (!account) throw invalidGrant('the user is not an active user');
  const claims = await account.claims('id_token', options.scope, {}, []);
  const idToken = new provider.IdToken({ ...claims, sub: options.accountId }, { ctx, client: ctx.oidc.client! });
  (idToken as unknown as { scope: string }).scope = options.scope;
  if (options.act) idToken.set('act', options.act);
  if (options.accessToken) idToken.set('at_hash', options.accessToken);
  return idToken.issue({ use: 'idtoken' });
}
