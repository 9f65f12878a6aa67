import type { Queryable } from './database.ts';
import { USER_COLUMNS, type UserRow } from './users.ts';
import type { OrgRow } from './orgs.ts';
import type { ProjectRow } from './projects.ts';
import type { AppRow } from './apps.ts';
import type { Page, TextMatch } from '../domain/search.ts';

// The SQL of the search calls. Every text column is compared as
// lower(column) COLLATE "C", the expression the indexes of migration 0007
// hold, so equality and prefixes are index ranges; a case-sensitive match
// adds an exact check on top of that range. Every order ends with the id,
// so a page is the same whichever plan answers it.

/** The WHERE clauses of one search and their parameters. */
export class Conditions {
  readonly params: unknown[] = [];
  private readonly clauses: string[] = [];

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  add(clause: string): this {
    this.clauses.push(clause);
    return this;
  }

  /** `column` compared with a text query, as one clause; `column` must be an expression of trusted SQL. */
  textClause(column: string, match: TextMatch): string {
    const escaped = match.value.replace(/[\\%_]/g, (c) => `\\${c}`);
    const [operator, operand] = match.position === 'equals' ? ['=', match.value] : ['LIKE', `${match.position === 'contains' ? '%' : ''}${escaped}%`];
    const value = this.param(operand);
    const range = `(lower(${column}) COLLATE "C") ${operator} lower(${value})`;
    return match.ignoreCase ? range : `${range} AND ${column} ${operator} ${value}`;
  }

  text(column: string, match: TextMatch): this {
    return this.add(this.textClause(column, match));
  }

  get where(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}

export interface PagedSelect {
  columns: string;
  /** The table (with alias) the conditions name. */
  table: string;
  /** Joins that only add columns, never filter: the count leaves them out. */
  joins?: string;
  conditions: Conditions;
  /** Sort expressions, the last one unique. */
  orderBy: string[];
  page: Page;
}

/** One page of rows in a total order, and the count of every matching row. */
export async function pagedRows<Row>(db: Queryable, select: PagedSelect): Promise<{ total: number; rows: Row[] }> {
  const { conditions, page } = select;
  const direction = page.asc ? 'ASC' : 'DESC';
  const params = [...conditions.params, page.limit, page.offset];
  const order = select.orderBy.map((expression) => `${expression} ${direction}`).join(', ');
  const [count, rows] = await Promise.all([
    db.query<{ total: string }>(`SELECT count(*)::text AS total FROM ${select.table} ${conditions.where}`, conditions.params),
    db.query<Row>(
      `SELECT ${select.columns} FROM ${select.table} ${select.joins ?? ''} ${conditions.where}
        ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    ),
  ]);
  return { total: Number(count.rows[0]!.total), rows: rows.rows };
}

const USER_NAME_ORDER = ['(lower(u.user_name) COLLATE "C")', 'u.id'];

export interface UserFilters {
  userName?: TextMatch;
  email?: TextMatch;
  displayName?: TextMatch;
  state?: string;
  type?: 'human' | 'machine';
}

/** Users of one org, by login name. */
export function searchUserRows(db: Queryable, orgId: string, filters: UserFilters[], page: Page): Promise<{ total: number; rows: UserRow[] }> {
  const conditions = new Conditions();
  conditions.add(`u.org_id = ${conditions.param(orgId)}`);
  for (const filter of filters) {
    if (filter.userName) conditions.text('u.user_name', filter.userName);
    if (filter.email) conditions.text('u.email', filter.email);
    if (filter.displayName) conditions.text('u.display_name', filter.displayName);
    if (filter.state) conditions.add(`u.state = ${conditions.param(filter.state)}`);
    if (filter.type) conditions.add(`u.type = ${conditions.param(filter.type)}`);
  }
  return pagedRows<UserRow>(db, {
    columns: USER_COLUMNS,
    table: 'users u',
    joins: 'JOIN orgs o ON o.id = u.org_id JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary',
    conditions,
    orderBy: USER_NAME_ORDER,
    page,
  });
}

export interface OrgFilters {
  name?: TextMatch;
  domain?: TextMatch;
}

/** Every org of the instance, by name; a domain query matches any of an org's domains. */
export function searchOrgRows(db: Queryable, filters: OrgFilters[], page: Page): Promise<{ total: number; rows: OrgRow[] }> {
  const conditions = new Conditions();
  for (const filter of filters) {
    if (filter.name) conditions.text('o.name', filter.name);
    if (filter.domain) conditions.add(`EXISTS (SELECT 1 FROM org_domains od WHERE od.org_id = o.id AND ${conditions.textClause('od.domain', filter.domain)})`);
  }
  return pagedRows<OrgRow>(db, {
    columns: 'o.id, o.name, o.state, d.domain AS primary_domain, o.sequence::text AS sequence, o.creation_date, o.change_date',
    table: 'orgs o',
    joins: 'JOIN org_domains d ON d.org_id = o.id AND d.is_primary',
    conditions,
    orderBy: ['(lower(o.name) COLLATE "C")', 'o.id'],
    page,
  });
}

/** Projects of one org, by name. */
export function searchProjectRows(db: Queryable, orgId: string, names: TextMatch[], page: Page): Promise<{ total: number; rows: ProjectRow[] }> {
  const conditions = new Conditions();
  conditions.add(`p.org_id = ${conditions.param(orgId)}`);
  for (const name of names) conditions.text('p.name', name);
  return pagedRows<ProjectRow>(db, {
    columns: 'p.id, p.org_id, p.name, p.sequence::text AS sequence, p.creation_date, p.change_date',
    table: 'projects p',
    conditions,
    orderBy: ['(lower(p.name) COLLATE "C")', 'p.id'],
    page,
  });
}

/** A row of the apps list: an OIDC app's row, or only the id of a SAML app (read by the caller). */
export type AppListRow = (AppRow & { kind: 'oidc' }) | { kind: 'saml'; id: string };

/** Apps of one project, OIDC and SAML together, by name. */
export async function searchAppRows(db: Queryable, projectId: string, names: TextMatch[], page: Page): Promise<{ total: number; rows: AppListRow[] }> {
  const conditions = new Conditions();
  conditions.add(`a.project_id = ${conditions.param(projectId)}`);
  for (const name of names) conditions.text('a.name', name);
  const found = await pagedRows<{ id: string; kind: 'oidc' | 'saml' }>(db, {
    columns: 'a.id, a.kind',
    table: `(SELECT id, project_id, name, 'oidc' AS kind FROM apps UNION ALL SELECT id, project_id, name, 'saml' AS kind FROM saml_apps) a`,
    conditions,
    orderBy: ['(lower(a.name) COLLATE "C")', 'a.id'],
    page,
  });
  const oidcIds = found.rows.filter((row) => row.kind === 'oidc').map((row) => row.id);
  const { rows: oidc } = oidcIds.length
    ? await db.query<AppRow>(
        `SELECT a.id, a.project_id, a.org_id, a.client_id, a.name, a.redirect_uris, a.post_logout_redirect_uris, a.response_types, a.grant_types,
          a.app_type, a.auth_method, a.access_token_type, a.id_token_userinfo_assertion, a.access_token_role_assertion, a.id_token_role_assertion,
          a.dev_mode, a.iam_api_access, NULL AS secret_digest, a.sequence::text AS sequence, a.creation_date, a.change_date
           FROM apps a WHERE a.id = ANY($1::text[])`,
        [oidcIds],
      )
    : { rows: [] };
  const byId = new Map(oidc.map((row) => [row.id, row]));
  const rows = found.rows.flatMap((row): AppListRow[] => {
    if (row.kind === 'saml') return [{ kind: 'saml', id: row.id }];
    const app = byId.get(row.id);
    return app ? [{ ...app, kind: 'oidc' }] : [];
  });
  return { total: found.total, rows };
}

export interface EventRow {
  position: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  resource_owner: string;
  creator: string | null;
  impersonated_user_id: string | null;
  payload: Record<string, unknown>;
  created_at: Date;
}

export interface EventFilters {
  types?: string[];
  aggregateId?: string;
  from?: string;
  to?: string;
}

/** The event log by position. */
export function searchEventRows(db: Queryable, filters: EventFilters[], page: Page): Promise<{ total: number; rows: EventRow[] }> {
  const conditions = new Conditions();
  for (const filter of filters) {
    if (filter.types) conditions.add(`e.event_type = ANY(${conditions.param(filter.types)}::text[])`);
    if (filter.aggregateId !== undefined) conditions.add(`e.aggregate_id = ${conditions.param(filter.aggregateId)}`);
    if (filter.from) conditions.add(`e.created_at >= ${conditions.param(filter.from)}::timestamptz`);
    if (filter.to) conditions.add(`e.created_at < ${conditions.param(filter.to)}::timestamptz`);
  }
  return pagedRows<EventRow>(db, {
    columns:
      'e.position::text AS position, e.aggregate_type, e.aggregate_id, e.event_type, e.resource_owner, e.creator, e.impersonated_user_id, e.payload, e.created_at',
    table: 'events e',
    conditions,
    orderBy: ['e.position'],
    page,
  });
}
