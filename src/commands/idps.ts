import { fieldError, InvalidArgument, NotFound } from '../domain/errors.ts';
import { configOf, PROVIDER_OPTION_DEFAULTS, type IdpKind, type ProviderOptions } from '../domain/idps.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { seal } from '../keys/sealing.ts';
import type { OutboundFetch } from '../outbound/client.ts';
import { BindRefused, type LdapDirectory } from '../outbound/ldap.ts';
import { fetchIdpMetadata } from '../outbound/saml-metadata.ts';
import { newSpSigningKey } from '../security/saml-sp-key.ts';
import { upstreamConfiguration } from '../outbound/upstream.ts';
import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { deleteIdp, findIdp, idpSecretAad, insertIdp, updateIdp, type StoredIdp } from '../storage/idps.ts';
import { findInstance } from '../storage/instance.ts';
import type { Queryable } from '../storage/database.ts';
import { unsealSecret } from '../queries/idps.ts';
import { assertMayManageIdps, type IdpScope } from '../queries/idp-scope.ts';

export type { IdpScope };

/** A create or change body: `name`, `providerOptions` and the kind's fields (docs/api/idps.md). */
export type IdpInput = Record<string, unknown> & { name: string; providerOptions?: Partial<ProviderOptions> };

export interface IdpCommandDeps {
  db: Database;
  /** Seals client secrets and bind passwords. */
  sealingKey: Buffer;
  /** The outbound client's fetch for a provider of this scope (instance-level ones may reach private addresses). */
  fetchFor(scope: IdpScope): OutboundFetch;
  /** The directory client for an LDAP provider of this scope, under the same address rule. */
  ldapFor(scope: IdpScope): LdapDirectory;
}

/** A provider of this scope (404 for any other, an instance one seen from an org included: it is changed at the instance). */
async function ownIdp(db: Database, scope: IdpScope, id: string): Promise<StoredIdp> {
  const idp = await findIdp(db, id);
  if (!idp || idp.orgId !== scope.orgId) throw new NotFound('identity provider not found');
  return idp;
}

/**
 * An issuer is taken only when its discovery works now, a directory only
 * when it takes the bind as `bindDn`: a wrong URL, an upstream that answers
 * no OpenID configuration or a wrong bind password is the caller's
 * mistake, said at once (400 naming `issuer`, `servers` or `bindPassword`),
 * not at the first user's sign-in.
 */
async function checkUpstream(deps: IdpCommandDeps, scope: IdpScope, kind: IdpKind, config: StoredIdp['config'], secret: string): Promise<void> {
  const upstream = kind.upstream(config);
  if (upstream.protocol === 'ldap') {
    try {
      await deps.ldapFor(scope).check(upstream, secret);
    } catch (err) {
      throw fieldError(err instanceof BindRefused ? 'bindPassword' : 'servers', `the bind failed: ${err instanceof Error ? err.message : 'no answer'}`);
    }
    return;
  }
  if (upstream.protocol === 'saml') {
    if (!('url' in upstream.metadata)) return;
    try {
      await fetchIdpMetadata(upstream.metadata.url, deps.fetchFor(scope));
    } catch (err) {
      throw fieldError('metadataUrl', `the metadata could not be used: ${err instanceof Error ? err.message : 'no answer'}`);
    }
    return;
  }
  if (!('issuer' in kind.properties)) return;
  try {
    await upstreamConfiguration(upstream, secret, deps.fetchFor(scope));
  } catch (err) {
    throw fieldError('issuer', `discovery failed: ${err instanceof Error ? err.message : 'no answer'}`);
  }
}

const secretOf = (kind: IdpKind, input: IdpInput): string | undefined => (kind.secretField ? (input[kind.secretField] as string | undefined) : undefined);

function optionsOf(input: IdpInput, before?: ProviderOptions): ProviderOptions {
  return { ...PROVIDER_OPTION_DEFAULTS, ...before, ...input.providerOptions };
}

async function instanceIdOf(db: Queryable): Promise<string> {
  const instance = await findInstance(db);
  if (!instance) throw new NotFound('the instance is not set up');
  return instance.id;
}

/** `POST …/idps/{kind}`: answers the new provider's id. */
export async function createIdp(
  deps: IdpCommandDeps,
  actor: Principal,
  scope: IdpScope,
  kind: IdpKind,
  input: IdpInput,
): Promise<{ id: string; details: WriteDetails }> {
  assertMayManageIdps(actor, scope);
  const config = configOf(kind, input);
  // The schema requires a given secret on create.
  const secret = kind.generatedKey ? newSpSigningKey() : secretOf(kind, input)!;
  await checkUpstream(deps, scope, kind, config, secret);
  const id = newId();
  return deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instanceId = await instanceIdOf(tx);
    const secretSealed = seal(deps.sealingKey, Buffer.from(secret, 'utf8'), idpSecretAad(id));
    await insertIdp(write, { id, orgId: scope.orgId, kind: kind.type, name: input.name, config, options: optionsOf(input), secretSealed }, instanceId);
    return { id, details: writeDetails(write, scope.orgId ?? instanceId) };
  });
}

/**
 * `PUT …/idps/{kind}/{id}`: the whole provider again. A secret left out is
 * kept while it would go to the same place; a change of the issuer, token
 * endpoint or directory servers needs it again (docs/decisions.md).
 */
export async function changeIdp(
  deps: IdpCommandDeps,
  actor: Principal,
  scope: IdpScope,
  kind: IdpKind,
  id: string,
  input: IdpInput,
): Promise<{ details: WriteDetails }> {
  assertMayManageIdps(actor, scope);
  const before = await ownIdp(deps.db, scope, id);
  if (before.kind !== kind.type) throw new InvalidArgument(`the identity provider is of type ${before.kind}, not ${kind.type}; remove it and create a new one`);
  const config = configOf(kind, input);
  const sameDestination = kind.secretDestination(config) === kind.secretDestination(before.config);
  const given = secretOf(kind, input);
  if (!given && !sameDestination) throw fieldError(kind.secretField ?? '(body)', 'is required when the provider moves to another address');
  const secret = given ?? unsealSecret(deps.sealingKey, before);
  await checkUpstream(deps, scope, kind, config, secret);
  return deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instanceId = await instanceIdOf(tx);
    const current = await findIdp(tx, id);
    if (!current || current.orgId !== scope.orgId) throw new NotFound('identity provider not found');
    const secretSealed = given ? seal(deps.sealingKey, Buffer.from(given, 'utf8'), idpSecretAad(id)) : current.secretSealed;
    await updateIdp(
      write,
      { id, orgId: scope.orgId, kind: kind.type, name: input.name, config, options: optionsOf(input, current.options), secretSealed },
      instanceId,
    );
    return { details: writeDetails(write, scope.orgId ?? instanceId) };
  });
}

/** `DELETE …/idps/{id}`: its links and its places in login policies go too. */
export async function removeIdp(deps: IdpCommandDeps, actor: Principal, scope: IdpScope, id: string): Promise<{ details: WriteDetails }> {
  assertMayManageIdps(actor, scope);
  return deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const instanceId = await instanceIdOf(tx);
    const idp = await findIdp(tx, id);
    if (!idp || idp.orgId !== scope.orgId) throw new NotFound('identity provider not found');
    await deleteIdp(write, idp, instanceId);
    return { details: writeDetails(write, scope.orgId ?? instanceId) };
  });
}
