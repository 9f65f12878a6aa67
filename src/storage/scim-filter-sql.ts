import type { AttrPath, CompareOp, Filter, FilterValue } from '../domain/scim/filter.ts';
import { InvalidFilter } from '../domain/scim/errors.ts';
import { isUserSchema } from '../domain/scim/user.ts';
import type { Conditions } from './search.ts';

// A SCIM filter tree (src/domain/scim/filter.ts) as one SQL condition on
// `users u`. Attribute names map to column expressions from the fixed
// table below and nothing else; every value the caller wrote becomes a
// parameter ($n) of `Conditions`, never SQL text. Each condition is
// two-valued (true or false, never NULL), so `not` means what it says.

type AttributeType = 'string' | 'boolean' | 'dateTime';

interface Column {
  /** A trusted SQL expression over `users u`. */
  sql: string;
  type: AttributeType;
  /** RFC 7643 2.2 caseExact: false compares without letter case. */
  caseExact: boolean;
  /** The expression can be NULL (an absent attribute). */
  nullable: boolean;
}

const column = (sql: string, type: AttributeType, caseExact: boolean, nullable: boolean): Column => ({ sql, type, caseExact, nullable });

const EMAIL_VALUE = column('u.email', 'string', false, true);
const EMAIL_TYPE = column(`(CASE WHEN u.email IS NULL THEN NULL ELSE 'work' END)`, 'string', false, true);
const EMAIL_PRIMARY = column('(u.email IS NOT NULL)', 'boolean', false, false);

/** The attributes a filter or sortBy may name (lower-cased full path) and their columns. */
const USER_ATTRIBUTES = new Map<string, Column>([
  ['id', column('u.id', 'string', true, false)],
  ['username', column('u.user_name', 'string', false, false)],
  ['externalid', column('u.external_id', 'string', true, true)],
  ['displayname', column('u.display_name', 'string', false, true)],
  ['name.givenname', column('u.first_name', 'string', false, true)],
  ['name.familyname', column('u.last_name', 'string', false, true)],
  ['active', column(`(u.state <> 'inactive')`, 'boolean', false, false)],
  ['emails', EMAIL_VALUE],
  ['emails.value', EMAIL_VALUE],
  ['emails.type', EMAIL_TYPE],
  ['emails.primary', EMAIL_PRIMARY],
  ['meta.created', column('u.creation_date', 'dateTime', false, false)],
  ['meta.lastmodified', column('u.change_date', 'dateTime', false, false)],
]);

/** Inside `emails[…]`: the sub-attributes of the one email a user has. */
const EMAIL_ATTRIBUTES = new Map<string, Column>([
  ['value', EMAIL_VALUE],
  ['type', EMAIL_TYPE],
  ['primary', EMAIL_PRIMARY],
]);

function nameOf(attr: AttrPath): string {
  return `${attr.name}${attr.sub ? `.${attr.sub}` : ''}`;
}

function columnOf(attr: AttrPath, attributes: Map<string, Column>): Column {
  if (attr.uri !== undefined && !isUserSchema(attr.uri)) throw new InvalidFilter(`"${attr.uri.slice(0, 100)}" is not a schema of the User resource`);
  const found = attributes.get(nameOf(attr).toLowerCase());
  if (!found) throw new InvalidFilter(`"${nameOf(attr).slice(0, 60)}" cannot be filtered on (docs/scim.md lists the attributes that can)`);
  return found;
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** An xsd:dateTime with its zone, years 1–9999; the instant in milliseconds. */
function instantOf(value: FilterValue, name: string): Date {
  const match = typeof value === 'string' ? ISO_DATE_TIME.exec(value) : null;
  const date = match ? new Date(value as string) : undefined;
  if (!match || !date || Number.isNaN(date.getTime()) || Number(match[1]) < 1) {
    throw new InvalidFilter(`"${name}" is compared with a date-time such as "2026-01-31T12:00:00Z"`);
  }
  return date;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The stored value as compared: lower-cased in code-point order unless caseExact, so indexes on lower(column) serve it. */
function comparable(col: Column): string {
  return col.caseExact ? `(${col.sql} COLLATE "C")` : `(lower(${col.sql}) COLLATE "C")`;
}

function textComparison(col: Column, op: CompareOp, value: string, conditions: Conditions): string {
  const lhs = comparable(col);
  const param = (v: string) => (col.caseExact ? conditions.param(v) : `lower(${conditions.param(v)})`);
  // Equality is the same in every collation: a caseExact column is compared
  // as it is stored, so its own index (externalId's, the primary key) serves.
  const equal = col.caseExact ? col.sql : lhs;
  switch (op) {
    case 'eq':
      return `${equal} = ${param(value)}`;
    case 'ne':
      return `${equal} <> ${param(value)}`;
    case 'co':
      return `${lhs} LIKE ${param(`%${escapeLike(value)}%`)}`;
    case 'sw':
      return `${lhs} LIKE ${param(`${escapeLike(value)}%`)}`;
    case 'ew':
      return `${lhs} LIKE ${param(`%${escapeLike(value)}`)}`;
    case 'gt':
      return `${lhs} > ${param(value)}`;
    case 'ge':
      return `${lhs} >= ${param(value)}`;
    case 'lt':
      return `${lhs} < ${param(value)}`;
    default:
      return `${lhs} <= ${param(value)}`;
  }
}

/**
 * Instants compare at the millisecond the API shows (meta.lastModified is
 * written with milliseconds): `eq t` is [t, t + 1 ms), as index ranges.
 */
function instantComparison(col: Column, op: CompareOp, at: Date, conditions: Conditions): string {
  const from = () => `${conditions.param(at.toISOString())}::timestamptz`;
  const until = () => `${conditions.param(new Date(at.getTime() + 1).toISOString())}::timestamptz`;
  switch (op) {
    case 'eq':
      return `(${col.sql} >= ${from()} AND ${col.sql} < ${until()})`;
    case 'ne':
      return `(${col.sql} < ${from()} OR ${col.sql} >= ${until()})`;
    case 'gt':
      return `${col.sql} >= ${until()}`;
    case 'ge':
      return `${col.sql} >= ${from()}`;
    case 'lt':
      return `${col.sql} < ${from()}`;
    case 'le':
      return `${col.sql} < ${until()}`;
    default:
      throw new InvalidFilter(`"${op}" does not compare date-times`);
  }
}

function comparison(filter: Extract<Filter, { value: FilterValue }>, attributes: Map<string, Column>, conditions: Conditions): string {
  const col = columnOf(filter.attr, attributes);
  const name = nameOf(filter.attr);
  const { op, value } = filter;
  if (value === null) {
    if (op === 'eq') return col.nullable ? `${col.sql} IS NULL` : 'false';
    if (op === 'ne') return col.nullable ? `${col.sql} IS NOT NULL` : 'true';
    throw new InvalidFilter(`"${op}" does not compare with null`);
  }
  let condition: string;
  if (col.type === 'boolean') {
    if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne'))
      throw new InvalidFilter(`"${name}" is a boolean: compare it with eq or ne and true or false`);
    condition = `${col.sql} ${op === 'eq' ? '=' : '<>'} ${conditions.param(value)}`;
  } else if (col.type === 'dateTime') {
    condition = instantComparison(col, op, instantOf(value, name), conditions);
  } else {
    if (typeof value !== 'string') throw new InvalidFilter(`"${name}" is a string: compare it with a string`);
    condition = textComparison(col, op, value, conditions);
  }
  // An absent attribute equals nothing and differs from every value.
  if (!col.nullable) return condition;
  return op === 'ne' ? `(${col.sql} IS NULL OR ${condition})` : `(${col.sql} IS NOT NULL AND ${condition})`;
}

function compile(filter: Filter, attributes: Map<string, Column>, conditions: Conditions): string {
  switch (filter.op) {
    case 'and':
    case 'or':
      return `(${compile(filter.left, attributes, conditions)} ${filter.op.toUpperCase()} ${compile(filter.right, attributes, conditions)})`;
    case 'not':
      return `(NOT ${compile(filter.filter, attributes, conditions)})`;
    case 'valuePath': {
      if (
        attributes !== USER_ATTRIBUTES ||
        filter.attr.sub ||
        filter.attr.name.toLowerCase() !== 'emails' ||
        (filter.attr.uri && !isUserSchema(filter.attr.uri))
      ) {
        throw new InvalidFilter(`"${nameOf(filter.attr).slice(0, 60)}" takes no value filter; only emails does`);
      }
      return `(u.email IS NOT NULL AND ${compile(filter.filter, EMAIL_ATTRIBUTES, conditions)})`;
    }
    case 'pr': {
      const col = columnOf(filter.attr, attributes);
      if (!col.nullable) return 'true';
      return col.type === 'string' ? `(${col.sql} IS NOT NULL AND ${col.sql} <> '')` : `${col.sql} IS NOT NULL`;
    }
    default:
      return comparison(filter, attributes, conditions);
  }
}

/** The filter as one condition, its values added to `conditions` as parameters; InvalidFilter for attributes or comparisons it cannot answer. */
export function userFilterSql(filter: Filter, conditions: Conditions): string {
  return compile(filter, USER_ATTRIBUTES, conditions);
}

/** The ORDER BY expression of a `sortBy` attribute path (RFC 7644 3.4.2.3); InvalidFilter when it names no sortable attribute. */
export function userSortSql(attr: AttrPath): string {
  const col = columnOf(attr, USER_ATTRIBUTES);
  return col.type === 'string' ? comparable(col) : col.sql;
}
