import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Queryable } from '../src/storage/database.ts';
import { TtlCache } from '../src/storage/ttl-cache.ts';
import { activeAppKeys, findAppByClientId, settingsOf } from '../src/storage/apps.ts';
import { findMachineById, findMachinesByClientId } from '../src/storage/credentials.ts';
import { toClientMetadata } from '../src/domain/apps.ts';
import { orgMayAct } from '../src/domain/may-act.ts';
import { JWT_BEARER_GRANT } from '../src/domain/grant-types.ts';
import { jwtProfileClientId, machineClientMetadata, machineUserOfJwtProfileClient } from '../src/domain/machine-clients.ts';
import { samlAppIdOfClient, samlClientMetadata } from '../src/domain/saml/engine-client.ts';
import { findSamlApp } from '../src/storage/saml-apps.ts';

/** How long a node may serve an app's settings before reading them again. */
export const CLIENT_CACHE_TTL_MS = 3000;

/**
 * The engine's clients are our OIDC apps and our machine users, read from
 * PostgreSQL. The engine looks its client up on every request, so they are
 * cached briefly — unknown ids too, so garbage client_ids cannot flood the
 * database. A command that changes an app or a machine user announces it
 * (Invalidation) and every node clears its cache; if a message is lost, an
 * entry ages out within CLIENT_CACHE_TTL_MS (every node within 5 seconds).
 */
export class ClientDirectory {
  #db: Queryable;
  #issuer: string | undefined;
  #cache = new TtlCache<string, AdapterPayload | undefined>((clientId) => this.#load(clientId), { ttlMs: CLIENT_CACHE_TTL_MS });

  /** Without `issuer`, SAML apps are not served as clients (they redirect to it). */
  constructor(db: Queryable, issuer?: string) {
    this.#db = db;
    this.#issuer = issuer;
  }

  find(clientId: string): Promise<AdapterPayload | undefined> {
    return this.#cache.get(clientId);
  }

  /** Some app or machine user changed, here or on another node. */
  clear(): void {
    this.#cache.clear();
  }

  async #load(clientId: string): Promise<AdapterPayload | undefined> {
    if (clientId.length > 500 || clientId.includes('\u0000')) return undefined;
    const jwtProfileUser = machineUserOfJwtProfileClient(clientId);
    if (jwtProfileUser) {
      const machine = await findMachineById(this.#db, jwtProfileUser);
      return (
        machine &&
        (machineClientMetadata({
          clientId: jwtProfileClientId(machine.id),
          userId: machine.id,
          orgId: machine.org_id,
          accessTokenType: machine.access_token_type,
          grant: JWT_BEARER_GRANT,
        }) as AdapterPayload)
      );
    }
    const samlAppId = samlAppIdOfClient(clientId);
    if (samlAppId !== undefined) return this.#loadSaml(samlAppId);
    const app = await findAppByClientId(this.#db, clientId);
    if (!app) return this.#loadMachine(clientId);
    // An inactive org's apps are no clients: no sign-in starts, no token is redeemed or refreshed there.
    if (!orgMayAct({ state: app.org_state })) return undefined;
    const publicKeys = app.auth_method === 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' ? await activeAppKeys(this.#db, app.id) : [];
    return toClientMetadata({
      clientId: app.client_id,
      projectId: app.project_id,
      orgId: app.org_id,
      settings: settingsOf(app),
      secretDigest: app.secret_digest ? Buffer.from(app.secret_digest).toString('base64url') : null,
      publicKeys,
      apiAccess: app.api_access,
    }) as AdapterPayload;
  }

  /** The engine client of a SAML app (src/domain/saml/engine-client.ts). */
  async #loadSaml(appId: string): Promise<AdapterPayload | undefined> {
    const app = this.#issuer ? await findSamlApp(this.#db, appId) : undefined;
    if (!app || !this.#issuer) return undefined;
    return samlClientMetadata({ appId: app.id, projectId: app.project_id, orgId: app.org_id, name: app.name, issuer: this.#issuer }) as AdapterPayload;
  }

  /** A machine user with a client secret, named by its userName (client_credentials, docs/api/users.md). */
  async #loadMachine(clientId: string): Promise<AdapterPayload | undefined> {
    const candidates = await findMachinesByClientId(this.#db, clientId);
    const machine = candidates.find((c) => c.full_match) ?? (candidates.length === 1 ? candidates[0] : undefined);
    if (!machine?.secret_digest) return undefined;
    return machineClientMetadata({
      clientId,
      userId: machine.id,
      orgId: machine.org_id,
      accessTokenType: machine.access_token_type,
      grant: 'client_credentials',
      secretDigest: Buffer.from(machine.secret_digest).toString('base64url'),
    }) as AdapterPayload;
  }
}

/** The engine's `Client` adapter: reads only, since dynamic registration is off. */
export class ClientAdapter implements Adapter {
  #directory: ClientDirectory;

  constructor(directory: ClientDirectory) {
    this.#directory = directory;
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.#directory.find(id);
  }

  async upsert(): Promise<void> {
    throw new Error('clients are managed through the management API');
  }

  async destroy(): Promise<void> {
    throw new Error('clients are managed through the management API');
  }

  async consume(): Promise<void> {}
  async findByUid(): Promise<undefined> {
    return undefined;
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async revokeByGrantId(): Promise<void> {}
}
