import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findApp, settingsOf, type AppRow } from '../storage/apps.ts';
import type { AppSettings } from '../domain/apps.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { projectOfOrg } from './projects.ts';
import { requireOrgOwner } from '../domain/permissions.ts';

/** The view of an app (docs/api/projects-apps.md): its settings and ids, never its secret. */
export interface AppView extends AppSettings {
  appId: string;
  projectId: string;
  clientId: string;
  details: WriteDetails;
}

export function toView(row: AppRow): AppView {
  return { appId: row.id, projectId: row.project_id, clientId: row.client_id, ...settingsOf(row), details: readDetails(row, row.org_id) };
}

/** An app of a project of the acting org; anything else is "not found" there. */
export async function appOfProject(db: Queryable, orgId: string, projectId: string, appId: string): Promise<AppRow> {
  await projectOfOrg(db, orgId, projectId);
  const app = await findApp(db, appId);
  if (!app || app.project_id !== projectId) throw new NotFound('app not found');
  return app;
}

export async function getOidcApp(db: Queryable, actor: Principal, orgId: string, projectId: string, appId: string): Promise<AppView> {
  requireOrgOwner(actor, orgId);
  return toView(await appOfProject(db, orgId, projectId, appId));
}
