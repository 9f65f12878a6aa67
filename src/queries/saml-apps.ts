import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findSamlApp, type SamlAppRow } from '../storage/saml-apps.ts';
import type { Endpoint } from '../domain/saml/metadata.ts';
import { NotFound } from '../domain/errors.ts';
import { projectOfOrg } from './projects.ts';

/** The view of a SAML app (docs/api/saml-apps.md): what the IdP took from the SP's metadata. */
export interface SamlAppView {
  appId: string;
  projectId: string;
  name: string;
  samlConfig: {
    entityId: string;
    metadataUrl?: string;
    /** The metadata document, base64 (as it was given). */
    metadataXml: string;
    assertionConsumerServices: Endpoint[];
    singleLogoutServices: Endpoint[];
    authnRequestsSigned: boolean;
    certificates: string[];
    allowIdpInitiated: boolean;
  };
  details: WriteDetails;
}

export function toSamlView(row: SamlAppRow): SamlAppView {
  return {
    appId: row.id,
    projectId: row.project_id,
    name: row.name,
    samlConfig: {
      entityId: row.entity_id,
      ...(row.metadata_url ? { metadataUrl: row.metadata_url } : {}),
      metadataXml: Buffer.from(row.metadata_xml, 'utf8').toString('base64'),
      assertionConsumerServices: row.acs,
      singleLogoutServices: row.slo,
      authnRequestsSigned: row.authn_requests_signed,
      certificates: row.certificates,
      allowIdpInitiated: row.allow_idp_initiated,
    },
    details: readDetails(row, row.org_id),
  };
}

/** A SAML app of a project of the acting org, or undefined when `appId` is none (it may be an OIDC app). */
export async function samlAppOfProject(db: Queryable, orgId: string, projectId: string, appId: string): Promise<SamlAppRow | undefined> {
  await projectOfOrg(db, orgId, projectId);
  const app = await findSamlApp(db, appId);
  return app && app.project_id === projectId ? app : undefined;
}

/** As above, not found otherwise. */
export async function existingSamlApp(db: Queryable, orgId: string, projectId: string, appId: string): Promise<SamlAppRow> {
  const app = await samlAppOfProject(db, orgId, projectId, appId);
  if (!app) throw new NotFound('app not found');
  return app;
}
