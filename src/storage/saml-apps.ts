import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import type { Endpoint, SpMetadata } from '../domain/saml/metadata.ts';

export interface SamlAppRow {
  id: string;
  project_id: string;
  org_id: string;
  name: string;
  entity_id: string;
  metadata_xml: string;
  metadata_url: string | null;
  acs: Endpoint[];
  slo: Endpoint[];
  certificates: string[];
  authn_requests_signed: boolean;
  allow_idp_initiated: boolean;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

const COLUMNS = `id, project_id, org_id, name, entity_id, metadata_xml, metadata_url, acs, slo, certificates, authn_requests_signed,
  allow_idp_initiated, sequence::text AS sequence, creation_date, change_date`;

export interface NewSamlApp {
  id: string;
  projectId: string;
  orgId: string;
  name: string;
  metadataXml: string;
  metadataUrl: string | null;
  metadata: SpMetadata;
  allowIdpInitiated: boolean;
}

export async function addSamlApp(write: Write, app: NewSamlApp): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: app.projectId,
    type: 'project.application.added',
    resourceOwner: app.orgId,
    payload: {
      appId: app.id,
      name: app.name,
      saml: { entityId: app.metadata.entityId, metadataUrl: app.metadataUrl, allowIdpInitiated: app.allowIdpInitiated },
    },
  });
  await write.tx.query(
    `INSERT INTO saml_apps (id, project_id, org_id, name, entity_id, metadata_xml, metadata_url, acs, slo, certificates, authn_requests_signed,
                            allow_idp_initiated, sequence, creation_date, change_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
    [
      app.id,
      app.projectId,
      app.orgId,
      app.name,
      app.metadata.entityId,
      app.metadataXml,
      app.metadataUrl,
      JSON.stringify(app.metadata.acs),
      JSON.stringify(app.metadata.slo),
      app.metadata.certificates,
      app.metadata.authnRequestsSigned,
      app.allowIdpInitiated,
      sequence,
      write.at,
    ],
  );
}

/** The settings of a SAML app that change in place (docs/api/saml-apps.md); the metadata does not. */
export async function changeSamlApp(write: Write, app: { id: string; projectId: string; orgId: string; allowIdpInitiated: boolean }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: app.projectId,
    type: 'project.application.changed',
    resourceOwner: app.orgId,
    payload: { appId: app.id, saml: { allowIdpInitiated: app.allowIdpInitiated } },
  });
  await write.tx.query('UPDATE saml_apps SET allow_idp_initiated = $2, sequence = $3, change_date = $4 WHERE id = $1', [
    app.id,
    app.allowIdpInitiated,
    sequence,
    write.at,
  ]);
}

export async function removeSamlApp(write: Write, app: { id: string; projectId: string; orgId: string }): Promise<void> {
  await write.append({
    aggregateType: 'project',
    aggregateId: app.projectId,
    type: 'project.application.removed',
    resourceOwner: app.orgId,
    payload: { appId: app.id },
  });
  await write.tx.query('DELETE FROM saml_apps WHERE id = $1', [app.id]);
}

export async function findSamlApp(db: Queryable, id: string): Promise<SamlAppRow | undefined> {
  if (id.includes('\u0000')) return undefined;
  const { rows } = await db.query<SamlAppRow>(`SELECT ${COLUMNS} FROM saml_apps WHERE id = $1`, [id]);
  return rows[0];
}

/** The app a request's Issuer names. */
export async function findSamlAppByEntityId(db: Queryable, entityId: string): Promise<SamlAppRow | undefined> {
  if (entityId.includes('\u0000') || entityId.length > 1024) return undefined;
  const { rows } = await db.query<SamlAppRow>(`SELECT ${COLUMNS} FROM saml_apps WHERE entity_id = $1`, [entityId]);
  return rows[0];
}

export async function samlEntityIdTaken(db: Queryable, entityId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM saml_apps WHERE entity_id = $1', [entityId]);
  return rows.length > 0;
}

export async function samlAppIdsOfProject(db: Queryable, projectId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM saml_apps WHERE project_id = $1 ORDER BY id', [projectId]);
  return rows.map((r) => r.id);
}
