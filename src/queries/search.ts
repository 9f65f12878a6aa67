import type { Queryable } from '../storage/database.ts';
import { readDetails } from '../storage/event-log.ts';
import { searchAppRows, searchEventRows, searchOrgRows, searchProjectRows, searchUserRows, type EventRow, type UserFilters } from '../storage/search.ts';
import { toUserView, type UserView } from './get-user.ts';
import { toView as toAppView, type AppView } from './apps.ts';
import { projectOfOrg } from './projects.ts';
import { toSamlView, type SamlAppView } from './saml-apps.ts';
import { findSamlApp } from '../storage/saml-apps.ts';
import { requireOrgOwner } from '../domain/permissions.ts';
import { PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, mayActInOrg, type Principal } from '../domain/roles.ts';
import { pageOf, textMatch, USER_STATES, USER_TYPES, type PageRequest, type SearchResult, type TextMethod } from '../domain/search.ts';
import type { WriteDetails } from '../storage/event-log.ts';

// The search calls (docs/api/search.md): who may list what, the queries of
// the wire turned into filters, and the rows into the views the GET calls
// answer. Users, projects and apps are always those of the acting org.

interface Text {
  method?: TextMethod;
}

export interface SearchRequest<Q> {
  query?: PageRequest;
  queries?: Q[];
}

export interface UserQuery {
  userNameQuery?: Text & { userName: string };
  emailQuery?: Text & { emailAddress: string };
  displayNameQuery?: Text & { displayName: string };
  stateQuery?: { state: string };
  typeQuery?: { type: string };
}

export interface NameQuery {
  nameQuery?: Text & { name: string };
}

export interface OrgQuery extends NameQuery {
  domainQuery?: Text & { domain: string };
}

export interface EventQuery {
  eventTypesQuery?: { types: string[] };
  aggregateIdQuery?: { id: string };
  creationDateQuery?: { from?: string; to?: string };
}

function answer<Row, View>({ total, rows }: { total: number; rows: Row[] }, view: (row: Row) => View): SearchResult<View> {
  return { details: { totalResult: String(total), viewTimestamp: new Date().toISOString() }, result: rows.map(view) };
}

const names = (queries: NameQuery[] = []) => queries.flatMap((q) => (q.nameQuery ? [textMatch(q.nameQuery.name, q.nameQuery.method)] : []));

export async function searchUsers(db: Queryable, actor: Principal, orgId: string, request: SearchRequest<UserQuery>): Promise<SearchResult<UserView>> {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER', 'ORG_USER_MANAGER'))
    throw new PermissionDenied('listing users of this organization requires ORG_OWNER or ORG_USER_MANAGER');
  const filters = (request.queries ?? []).map(
    (q): UserFilters => ({
      ...(q.userNameQuery && { userName: textMatch(q.userNameQuery.userName, q.userNameQuery.method) }),
      ...(q.emailQuery && { email: textMatch(q.emailQuery.emailAddress, q.emailQuery.method) }),
      ...(q.displayNameQuery && { displayName: textMatch(q.displayNameQuery.displayName, q.displayNameQuery.method) }),
      ...(q.stateQuery && { state: USER_STATES[q.stateQuery.state] }),
      ...(q.typeQuery && { type: USER_TYPES[q.typeQuery.type] }),
    }),
  );
  return answer(await searchUserRows(db, orgId, filters, pageOf(request.query)), toUserView);
}

export interface ProjectListItem {
  id: string;
  name: string;
  details: WriteDetails;
}

export async function searchProjects(
  db: Queryable,
  actor: Principal,
  orgId: string,
  request: SearchRequest<NameQuery>,
): Promise<SearchResult<ProjectListItem>> {
  requireOrgOwner(actor, orgId);
  const found = await searchProjectRows(db, orgId, names(request.queries), pageOf(request.query));
  return answer(found, (row) => ({ id: row.id, name: row.name, details: readDetails(row, row.org_id) }));
}

export async function searchApps(
  db: Queryable,
  actor: Principal,
  orgId: string,
  projectId: string,
  request: SearchRequest<NameQuery>,
): Promise<SearchResult<AppView | SamlAppView>> {
  requireOrgOwner(actor, orgId);
  await projectOfOrg(db, orgId, projectId);
  const found = await searchAppRows(db, projectId, names(request.queries), pageOf(request.query));
  const saml = await Promise.all(found.rows.map((row) => (row.kind === 'saml' ? findSamlApp(db, row.id) : undefined)));
  const views = found.rows.flatMap((row, i): Array<AppView | SamlAppView> => {
    if (row.kind === 'oidc') return [toAppView(row)];
    return saml[i] ? [toSamlView(saml[i])] : [];
  });
  return { details: { totalResult: String(found.total), viewTimestamp: new Date().toISOString() }, result: views };
}

export interface OrgView {
  id: string;
  name: string;
  state: string;
  primaryDomain: string;
  details: WriteDetails;
}

export async function searchOrgs(db: Queryable, actor: Principal, request: SearchRequest<OrgQuery>): Promise<SearchResult<OrgView>> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('listing organizations requires IAM_OWNER');
  const filters = (request.queries ?? []).map((q) => ({
    ...(q.nameQuery && { name: textMatch(q.nameQuery.name, q.nameQuery.method) }),
    ...(q.domainQuery && { domain: textMatch(q.domainQuery.domain, q.domainQuery.method) }),
  }));
  const found = await searchOrgRows(db, filters, pageOf(request.query));
  return answer(found, (row) => ({
    id: row.id,
    name: row.name,
    state: `ORG_STATE_${row.state.toUpperCase()}`,
    primaryDomain: row.primary_domain,
    details: readDetails(row, row.id),
  }));
}

export interface EventView {
  sequence: string;
  creationDate: string;
  type: string;
  aggregate: { id: string; type: string; resourceOwner: string };
  editor: { userId: string; impersonatedUserId?: string };
  payload: Record<string, unknown>;
}

function toEventView(row: EventRow): EventView {
  return {
    sequence: row.position,
    creationDate: new Date(row.created_at).toISOString(),
    type: row.event_type,
    aggregate: { id: row.aggregate_id, type: row.aggregate_type, resourceOwner: row.resource_owner },
    editor: { userId: row.creator ?? '', ...(row.impersonated_user_id ? { impersonatedUserId: row.impersonated_user_id } : {}) },
    payload: row.payload,
  };
}

export async function searchEvents(db: Queryable, actor: Principal, request: SearchRequest<EventQuery>): Promise<SearchResult<EventView>> {
  if (!hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('reading the event log requires IAM_OWNER');
  const filters = (request.queries ?? []).map((q) => ({
    ...(q.eventTypesQuery && { types: q.eventTypesQuery.types }),
    ...(q.aggregateIdQuery && { aggregateId: q.aggregateIdQuery.id }),
    ...(q.creationDateQuery && { from: q.creationDateQuery.from, to: q.creationDateQuery.to }),
  }));
  return answer(await searchEventRows(db, filters, pageOf(request.query)), toEventView);
}
