import { MAX_LIMIT, TEXT_METHODS, USER_STATES, USER_TYPES } from '../domain/search.ts';
import type { FieldViolation } from '../domain/errors.ts';

// JSON Schemas of the search calls (docs/api/search.md): a page and a list of
// queries, each query an object with exactly one of the resource's query
// forms. As in schemas.ts, a `description` is what a caller reads when the
// value does not fit.

/** A uint64 in proto3 JSON: a number or a string of digits. */
function unsigned(description: string, maximum: number) {
  return {
    anyOf: [
      { type: 'integer', minimum: 0, maximum, description },
      { type: 'string', pattern: '^[0-9]{1,15}$', description },
    ],
  };
}

const PAGE = {
  type: 'object',
  additionalProperties: false,
  properties: {
    offset: unsigned('must be a whole number of at least 0', 1e15),
    limit: unsigned(`must be a whole number from 0 (the default, 100) to ${MAX_LIMIT}`, MAX_LIMIT),
    asc: { type: 'boolean' },
  },
};

function textQuery(field: string) {
  return {
    type: 'object',
    additionalProperties: false,
    required: [field],
    properties: { [field]: { type: 'string', maxLength: 200 }, method: { type: 'string', enum: [...TEXT_METHODS] } },
  };
}

function searchSchema(forms: Record<string, object>) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      query: PAGE,
      queries: {
        type: 'array',
        maxItems: 20,
        items: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          maxProperties: 1,
          properties: forms,
          description: `must hold exactly one of ${Object.keys(forms).join(', ')}`,
        },
      },
    },
  };
}

/** `limit` as a string escapes the schema's maximum. */
export function limitRule(body: { query?: { limit?: unknown } }): FieldViolation[] {
  const limit = body.query?.limit;
  return typeof limit === 'string' && /^[0-9]+$/.test(limit) && Number(limit) > MAX_LIMIT
    ? [{ field: 'query.limit', description: `must be at most ${MAX_LIMIT}` }]
    : [];
}

export const userSearchSchema = searchSchema({
  userNameQuery: textQuery('userName'),
  emailQuery: textQuery('emailAddress'),
  displayNameQuery: textQuery('displayName'),
  stateQuery: { type: 'object', additionalProperties: false, required: ['state'], properties: { state: { type: 'string', enum: Object.keys(USER_STATES) } } },
  typeQuery: { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { type: 'string', enum: Object.keys(USER_TYPES) } } },
});

export const nameSearchSchema = searchSchema({ nameQuery: textQuery('name') });

export const orgSearchSchema = searchSchema({ nameQuery: textQuery('name'), domainQuery: textQuery('domain') });

const DATE = { type: 'string', maxLength: 64, format: 'date-time', description: 'must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' };

export const eventSearchSchema = searchSchema({
  eventTypesQuery: {
    type: 'object',
    additionalProperties: false,
    required: ['types'],
    properties: { types: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 200 } } },
  },
  aggregateIdQuery: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 200 } } },
  creationDateQuery: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { from: DATE, to: DATE },
    description: 'must hold from, to or both',
  },
});

/**
 * RFC 3339 lets a date-time name the year 0000, which PostgreSQL has no
 * timestamp for; the dates of a search are of the years 1 to 9999.
 */
export function dateRangeRule(body: { queries?: unknown }): FieldViolation[] {
  if (!Array.isArray(body.queries)) return [];
  return body.queries.flatMap((query: unknown, i) => {
    const range = (query as { creationDateQuery?: Record<string, unknown> } | null)?.creationDateQuery;
    if (!range || typeof range !== 'object') return [];
    return (['from', 'to'] as const)
      .filter((bound) => typeof range[bound] === 'string' && /^0000/.test(range[bound]))
      .map((bound) => ({ field: `queries[${i}].creationDateQuery.${bound}`, description: 'must be a date of the years 1 to 9999' }));
  });
}

export const roleSearchSchema = searchSchema({ keyQuery: textQuery('key'), displayNameQuery: textQuery('displayName') });

export const memberSearchSchema = searchSchema({ userNameQuery: textQuery('userName'), displayNameQuery: textQuery('displayName') });
