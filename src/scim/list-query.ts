import type { ParsedUrlQuery } from 'node:querystring';
import { ScimInvalid } from '../domain/scim/errors.ts';
import { attrPathOf, parseFilter } from '../domain/scim/filter.ts';
import { namesOfList, projectionOf, type Projection } from '../domain/scim/projection.ts';
import type { ScimListQuery } from '../storage/scim-users.ts';
import { DEFAULT_COUNT, MAX_RESULTS } from './discovery.ts';

const INTEGER = /^[+-]?\d{1,15}$/;

function single(query: ParsedUrlQuery, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new ScimInvalid('invalidValue', `"${name}" is given more than once`);
  return value;
}

function integer(query: ParsedUrlQuery, name: string): number | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  if (!INTEGER.test(value)) throw new ScimInvalid('invalidValue', `"${name}" must be an integer`);
  return Number(value);
}

/**
 * The query of a list request (RFC 7644 3.4.2): `filter`, `sortBy`,
 * `sortOrder`, and the page. A `startIndex` below 1 counts as 1, a
 * negative `count` as 0 (RFC 7644 3.4.2.4); `count` is capped at the
 * `maxResults` the ServiceProviderConfig announces.
 */
export function listQueryOf(query: ParsedUrlQuery): ScimListQuery & { startIndex: number } {
  const filterText = single(query, 'filter');
  const sortByText = single(query, 'sortBy');
  const sortOrder = single(query, 'sortOrder');
  const startIndex = Math.max(1, integer(query, 'startIndex') ?? 1);
  const count = Math.min(MAX_RESULTS, Math.max(0, integer(query, 'count') ?? DEFAULT_COUNT));
  if (sortOrder !== undefined && !/^(ascending|descending)$/i.test(sortOrder))
    throw new ScimInvalid('invalidValue', '"sortOrder" must be ascending or descending');
  const sortBy = sortByText === undefined ? undefined : attrPathOf(sortByText);
  if (sortByText !== undefined && !sortBy) throw new ScimInvalid('invalidValue', '"sortBy" must be an attribute path such as userName');
  return {
    ...(filterText === undefined ? {} : { filter: parseFilter(filterText) }),
    ...(sortBy ? { sortBy } : {}),
    ascending: sortOrder === undefined || sortOrder.toLowerCase() === 'ascending',
    startIndex,
    offset: startIndex - 1,
    limit: count,
  };
}

/** The `attributes` or `excludedAttributes` of a request's query string (RFC 7644 3.9). */
export function projectionOfQuery(query: ParsedUrlQuery): Projection | undefined {
  const attributes = single(query, 'attributes');
  const excluded = single(query, 'excludedAttributes');
  return projectionOf(
    attributes === undefined ? undefined : namesOfList('attributes', attributes),
    excluded === undefined ? undefined : namesOfList('excludedAttributes', excluded),
  );
}
