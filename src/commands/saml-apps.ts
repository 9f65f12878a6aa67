import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails } from '../storage/event-log.ts';
import { addSamlApp, changeSamlApp, removeSamlApp, samlEntityIdTaken } from '../storage/saml-apps.ts';
import type { Announce } from '../storage/invalidation.ts';
import { MetadataProblem, parseSpMetadata, SamlRefused, type SpMetadata } from '../domain/saml/metadata.ts';
import { AlreadyExists, fieldError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { requireOrgOwner } from '../domain/permissions.ts';
import type { OutboundFetch } from '../outbound/client.ts';
import { OutboundError } from '../outbound/errors.ts';
import { projectOfOrg } from '../queries/projects.ts';
import { existingSamlApp } from '../queries/saml-apps.ts';

export interface SamlAppDeps {
  db: Database;
  announce: Announce;
  /** The outbound client's fetch for app-supplied addresses (metadataUrl). */
  fetchMetadata: OutboundFetch;
}

export interface CreateSamlAppInput {
  name: string;
  /** The SP's metadata document, base64. */
  metadataXml?: string;
  metadataUrl?: string;
  /** IdP-initiated sign-in (docs/saml.md) may send this SP unsolicited responses. */
  allowIdpInitiated?: boolean;
}

export interface ChangeSamlAppInput {
  allowIdpInitiated: boolean;
}

/** The metadata document behind `metadataUrl`: one GET through the outbound client, 200 only. */
async function downloadMetadata(fetchMetadata: OutboundFetch, metadataUrl: string): Promise<string> {
  const url = URL.parse(metadataUrl);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || metadataUrl.includes('#'))
    throw fieldError('metadataUrl', 'must be an absolute http(s) URL');
  try {
    const response = await fetchMetadata(url, { headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw fieldError('metadataUrl', `answered HTTP ${response.status}, not the metadata`);
    }
    return await response.text();
  } catch (err) {
    if (err instanceof OutboundError) throw fieldError('metadataUrl', `could not be fetched: ${err.message}`);
    throw err;
  }
}

function decodeBase64(field: string, value: string): string {
  if (!/^[A-Za-z0-9+/=\s]*$/.test(value)) throw fieldError(field, 'must be base64');
  const text = Buffer.from(value, 'base64').toString('utf8');
  if (!text.isWellFormed() || text.includes('\uFFFD')) throw fieldError(field, 'must be the base64 of UTF-8 XML');
  return text;
}

/** The parsed metadata, or 400 naming `field` with what is wrong with it. */
function parsed(field: string, xml: string): SpMetadata {
  try {
    return parseSpMetadata(xml);
  } catch (err) {
    if (err instanceof MetadataProblem || err instanceof SamlRefused) throw fieldError(field, err.message);
    throw err;
  }
}

/** `POST /management/v1/projects/{projectId}/apps/saml` (docs/api/saml-apps.md). */
export async function createSamlApp(deps: SamlAppDeps, actor: Principal, orgId: string, projectId: string, input: CreateSamlAppInput) {
  requireOrgOwner(actor, orgId);
  await projectOfOrg(deps.db, orgId, projectId);
  if (Boolean(input.metadataXml) === Boolean(input.metadataUrl)) throw fieldError('metadataXml', 'give exactly one of metadataXml and metadataUrl');
  const field = input.metadataXml ? 'metadataXml' : 'metadataUrl';
  const xml = input.metadataXml ? decodeBase64('metadataXml', input.metadataXml) : await downloadMetadata(deps.fetchMetadata, input.metadataUrl!);
  const metadata = parsed(field, xml);
  const appId = newId();
  const details = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await projectOfOrg(tx, orgId, projectId);
    if (await samlEntityIdTaken(tx, metadata.entityId)) throw new AlreadyExists('a SAML app with this entityID exists');
    await addSamlApp(write, {
      id: appId,
      projectId,
      orgId,
      name: input.name,
      metadataXml: xml,
      metadataUrl: input.metadataUrl ?? null,
      metadata,
      allowIdpInitiated: input.allowIdpInitiated ?? false,
    });
    return writeDetails(write, orgId);
  });
  deps.announce('clients');
  return { appId, details };
}

/** `PUT …/apps/{appId}` of a SAML app: the settings that are not its metadata. */
export async function changeSamlAppCommand(
  deps: Pick<SamlAppDeps, 'db' | 'announce'>,
  actor: Principal,
  orgId: string,
  projectId: string,
  appId: string,
  input: ChangeSamlAppInput,
) {
  requireOrgOwner(actor, orgId);
  const details = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await existingSamlApp(tx, orgId, projectId, appId);
    await changeSamlApp(write, { id: appId, projectId, orgId, allowIdpInitiated: input.allowIdpInitiated });
    return writeDetails(write, orgId);
  });
  deps.announce('clients');
  return { details };
}

/** `DELETE …/apps/{appId}` of a SAML app: its requests are unknown from then on, on every node. */
export async function removeSamlAppCommand(deps: Pick<SamlAppDeps, 'db' | 'announce'>, actor: Principal, orgId: string, projectId: string, appId: string) {
  requireOrgOwner(actor, orgId);
  const details = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await existingSamlApp(tx, orgId, projectId, appId);
    await removeSamlApp(write, { id: appId, projectId, orgId });
    return writeDetails(write, orgId);
  });
  deps.announce('clients');
  return { details };
}
