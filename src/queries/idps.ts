import { NotFound } from '../domain/errors.ts';
import { kindOfType, type IdpConfig, type ProviderOptions, type Upstream } from '../domain/idps.ts';
import type { Principal } from '../domain/roles.ts';
import { pageOf, textMatch, type SearchResult } from '../domain/search.ts';
import { unseal } from '../keys/sealing.ts';
import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findIdp, idpSecretAad, searchIdps, type StoredIdp } from '../storage/idps.ts';
import { assertMayManageIdps, type IdpScope } from './idp-scope.ts';
import type { NameQuery, SearchRequest } from './search.ts';

/** `GET …/idps/{id}` (docs/api/idps.md): never the client secret or bind password. */
export interface IdpView {
  id: string;
  details: WriteDetails;
  name: string;
  type: string;
  state: 'IDP_STATE_ACTIVE';
  /** IDP_OWNER_TYPE_SYSTEM: the instance's; IDP_OWNER_TYPE_ORG: the org's own. */
  owner: 'IDP_OWNER_TYPE_SYSTEM' | 'IDP_OWNER_TYPE_ORG';
  providerOptions: ProviderOptions;
  config: IdpConfig;
}

function view(idp: StoredIdp, instanceId: string): IdpView {
  return {
    id: idp.id,
    details: readDetails({ sequence: idp.sequence, creation_date: idp.creationDate, change_date: idp.changeDate }, idp.orgId ?? instanceId),
    name: idp.name,
    type: idp.kind,
    state: 'IDP_STATE_ACTIVE',
    owner: idp.orgId ? 'IDP_OWNER_TYPE_ORG' : 'IDP_OWNER_TYPE_SYSTEM',
    providerOptions: idp.options,
    config: idp.config,
  };
}

async function instanceId(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM instance');
  if (!rows[0]) throw new NotFound('the instance is not set up');
  return rows[0].id;
}

/**
 * A provider an org may use: its own or the instance's. At the instance
 * (`orgId` null) only the instance's.
 */
export async function usableIdp(db: Queryable, orgId: string | null, id: string): Promise<StoredIdp | undefined> {
  const idp = await findIdp(db, id);
  return idp && (idp.orgId === null || idp.orgId === orgId) ? idp : undefined;
}

export async function getIdp(db: Queryable, actor: Principal, scope: IdpScope, id: string): Promise<{ idp: IdpView }> {
  assertMayManageIdps(actor, scope);
  const idp = await usableIdp(db, scope.orgId, id);
  if (!idp) throw new NotFound('identity provider not found');
  return { idp: view(idp, await instanceId(db)) };
}

/** `POST …/idps/_search`: at the instance its own providers; in an org the org's and the instance's. */
export async function searchIdpViews(db: Queryable, actor: Principal, scope: IdpScope, request: SearchRequest<NameQuery>): Promise<SearchResult<IdpView>> {
  assertMayManageIdps(actor, scope);
  const names = (request.queries ?? []).flatMap((q) => (q.nameQuery ? [textMatch(q.nameQuery.name, q.nameQuery.method)] : []));
  const { total, rows } = await searchIdps(db, scope.orgId, names, pageOf(request.query));
  const id = await instanceId(db);
  return { details: { totalResult: String(total), viewTimestamp: new Date().toISOString() }, result: rows.map((row) => view(row, id)) };
}

export function unsealSecret(sealingKey: Buffer, idp: StoredIdp): string {
  if (!idp.secretSealed) return '';
  return unseal(sealingKey, idp.secretSealed, idpSecretAad(idp.id)).toString('utf8');
}

/** What the login needs of a provider: where its upstream is and its secret (the client secret to redeem codes with, or the LDAP bind password). */
export interface LoginIdp {
  idp: StoredIdp;
  upstream: Upstream;
  secret: string;
}

export function loginIdpOf(sealingKey: Buffer, idp: StoredIdp): LoginIdp | undefined {
  const kind = kindOfType(idp.kind);
  if (!kind) return undefined;
  return { idp, upstream: kind.upstream(idp.config), secret: unsealSecret(sealingKey, idp) };
}
