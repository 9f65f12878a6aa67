import { UsageError, type Options, type Values } from './args.ts';
import type { Command } from './command.ts';
import { count, str } from './option-values.ts';

// The list commands: orgs, users, projects and an app's of a project, each
// one search call of docs/api/search.md, printed as an aligned table.

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;

const LIST_OPTIONS: Options = {
  name: { type: 'string', arg: '<text>', description: 'only those whose name contains <text> (any case)' },
  limit: { type: 'string', arg: '<n>', description: `at most <n> rows, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})` },
};

type Row = Record<string, any>;

export interface ListSpec {
  name: string;
  summary: string;
  /** What is listed, for "No <what>." and the count line; `one` for a count of one. */
  what: string;
  one: string;
  path(values: Values): string;
  /** The search query form of `--name` (users match their login name, the rest their name). */
  nameQuery(text: string): Record<string, unknown>;
  columns: Array<[header: string, cell: (row: Row) => string]>;
  options?: Options;
  required?: string[];
}

export function limitOf(command: string, values: Values): number {
  const limit = count(command, values, 'limit') ?? DEFAULT_LIMIT;
  if (limit < 1 || limit > MAX_LIMIT) throw new UsageError(`--limit must be from 1 to ${MAX_LIMIT} (got '${str(values, 'limit')}')`, command);
  return limit;
}

/** Rows as columns padded to their widest cell, under a header. */
export function table(columns: ListSpec['columns'], rows: Row[]): string[] {
  const cells = [columns.map(([header]) => header), ...rows.map((row) => columns.map(([, cell]) => cell(row)))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells.map((line) => line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
}

export function listCommand(spec: ListSpec): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    options: { ...spec.options, ...LIST_OPTIONS },
    required: spec.required ?? [],
    request(values) {
      const limit = limitOf(spec.name, values);
      const name = str(values, 'name');
      return {
        method: 'POST',
        path: spec.path(values),
        body: { query: { offset: '0', limit, asc: true }, queries: name === undefined ? [] : [spec.nameQuery(name)] },
      };
    },
    describe(response) {
      const rows: Row[] = Array.isArray(response.result) ? response.result : [];
      const total = Number(response.details?.totalResult ?? rows.length);
      if (!rows.length) return [`No ${spec.what}.`];
      const shown =
        rows.length < total
          ? `${rows.length} of ${total} ${spec.what} (raise --limit or narrow with --name)`
          : `${total} ${total === 1 ? spec.one : spec.what}`;
      return [...table(spec.columns, rows), shown];
    },
  };
}

const contains = (field: string, key: string) => (text: string) => ({ [field]: { [key]: text, method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } });
const state = (value: unknown, prefix: string) =>
  String(value ?? '')
    .replace(prefix, '')
    .toLowerCase();

export const LIST_COMMANDS: Command[] = [
  listCommand({
    name: 'list-orgs',
    summary: 'list the organizations of the instance (needs IAM_OWNER)',
    what: 'organizations',
    one: 'organization',
    path: () => '/admin/v1/orgs/_search',
    nameQuery: contains('nameQuery', 'name'),
    columns: [
      ['ID', (r) => String(r.id)],
      ['STATE', (r) => state(r.state, 'ORG_STATE_')],
      ['DOMAIN', (r) => String(r.primaryDomain ?? '')],
      ['NAME', (r) => String(r.name)],
    ],
  }),
  listCommand({
    name: 'list-users',
    summary: 'list the users of the org; --name matches the login name (needs ORG_OWNER or ORG_USER_MANAGER)',
    what: 'users',
    one: 'user',
    path: () => '/management/v1/users/_search',
    nameQuery: contains('userNameQuery', 'userName'),
    columns: [
      ['ID', (r) => String(r.id)],
      ['TYPE', (r) => (r.machine ? 'machine' : 'human')],
      ['STATE', (r) => state(r.state, 'USER_STATE_')],
      ['LOGIN NAME', (r) => String(r.preferredLoginName ?? r.userName)],
    ],
  }),
  listCommand({
    name: 'list-projects',
    summary: 'list the projects of the org (needs ORG_OWNER)',
    what: 'projects',
    one: 'project',
    path: () => '/management/v1/projects/_search',
    nameQuery: contains('nameQuery', 'name'),
    columns: [
      ['ID', (r) => String(r.id)],
      ['NAME', (r) => String(r.name)],
    ],
  }),
  listCommand({
    name: 'list-apps',
    summary: 'list the apps of a project (needs ORG_OWNER)',
    what: 'apps',
    one: 'app',
    options: { project: { type: 'string', arg: '<projectId>', description: 'project id' } },
    required: ['project'],
    path: (values) => `/management/v1/projects/${encodeURIComponent(str(values, 'project')!)}/apps/_search`,
    nameQuery: contains('nameQuery', 'name'),
    columns: [
      ['ID', (r) => String(r.appId)],
      ['CLIENT ID', (r) => String(r.clientId)],
      [
        'TYPE',
        (r) =>
          String(r.appType ?? '')
            .replace('OIDC_APP_TYPE_', '')
            .toLowerCase(),
      ],
      ['NAME', (r) => String(r.name)],
    ],
  }),
];
