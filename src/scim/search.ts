import type { ParsedUrlQuery } from 'node:querystring';
import { ScimInvalid } from '../domain/scim/errors.ts';
import { namesOfList, projectionOf, type Projection } from '../domain/scim/projection.ts';
import type { ScimListQuery } from '../storage/scim-users.ts';
import { validator } from '../admin/validate.ts';
import { listQueryOf } from './list-query.ts';
import { canonicalFields } from './body.ts';

// The body of `POST …/.search` (RFC 7644 3.4.3): the parameters of a list
// request as JSON, so that a filter holding personal data stays out of
// URLs and their logs. It is read into the query a GET takes, so both
// answer alike.

const SEARCH_REQUEST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

const FIELDS = ['schemas', 'attributes', 'excludedAttributes', 'filter', 'sortBy', 'sortOrder', 'startIndex', 'count'];

const names = {
  oneOf: [
    { type: 'string', maxLength: 4096 },
    { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 300 } },
  ],
  description: 'must be a list of attribute names',
};

interface SearchRequest {
  schemas: string[];
  attributes?: string | string[];
  excludedAttributes?: string | string[];
  filter?: string;
  sortBy?: string;
  sortOrder?: string;
  startIndex?: number;
  count?: number;
}

const checkSearch = validator<SearchRequest>({
  type: 'object',
  required: ['schemas'],
  properties: {
    schemas: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 200 } },
    attributes: names,
    excludedAttributes: names,
    filter: { type: 'string', maxLength: 4096 },
    sortBy: { type: 'string', maxLength: 300 },
    sortOrder: { type: 'string', maxLength: 20 },
    startIndex: { type: 'integer' },
    count: { type: 'integer' },
  },
});

function listOfNames(parameter: string, value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? namesOfList(parameter, value) : value.map((name) => name.trim());
}

/** The list query and projection of a SearchRequest body; field names in any letter case (RFC 7643 2.1). */
export function searchOf(body: unknown): { query: ScimListQuery & { startIndex: number }; projection: Projection | undefined } {
  const search = checkSearch(canonicalFields(body, FIELDS, 'SearchRequest'));
  if (!search.schemas.some((uri) => uri.toLowerCase() === SEARCH_REQUEST_SCHEMA.toLowerCase()))
    throw new ScimInvalid('invalidSyntax', `"schemas" must list ${SEARCH_REQUEST_SCHEMA}`);
  const query: ParsedUrlQuery = {};
  for (const field of ['filter', 'sortBy', 'sortOrder', 'startIndex', 'count'] as const) {
    if (search[field] !== undefined) query[field] = String(search[field]);
  }
  return {
    query: listQueryOf(query),
    projection: projectionOf(listOfNames('attributes', search.attributes), listOfNames('excludedAttributes', search.excludedAttributes)),
  };
}
