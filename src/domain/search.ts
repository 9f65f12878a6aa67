// Search requests as ZITADEL v1 writes them: a page (offset, limit, order)
// and a list of queries that all must hold. Plain values here; the SQL that
// answers them lives in storage/search.ts.

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export const TEXT_METHODS = [
  'TEXT_QUERY_METHOD_EQUALS',
  'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE',
  'TEXT_QUERY_METHOD_STARTS_WITH',
  'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE',
  'TEXT_QUERY_METHOD_CONTAINS',
  'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE',
] as const;
export type TextMethod = (typeof TEXT_METHODS)[number];

/** How a text query compares: the whole value, its start or any part; with or without letter case. */
export interface TextMatch {
  value: string;
  position: 'equals' | 'starts' | 'contains';
  ignoreCase: boolean;
}

/** ZITADEL's default method is EQUALS. */
export function textMatch(value: string, method: TextMethod = 'TEXT_QUERY_METHOD_EQUALS'): TextMatch {
  const position = method.includes('STARTS_WITH') ? 'starts' : method.includes('CONTAINS') ? 'contains' : 'equals';
  return { value, position, ignoreCase: method.endsWith('_IGNORE_CASE') };
}

export interface PageRequest {
  /** A uint64 in JSON: a string of digits or a number. */
  offset?: string | number;
  limit?: string | number;
  asc?: boolean;
}

export interface Page {
  offset: number;
  limit: number;
  asc: boolean;
}

/** The page asked for: limit 0 (or none) is the default; the schema has already bounded both numbers. */
export function pageOf(query: PageRequest | undefined): Page {
  const limit = Number(query?.limit ?? 0);
  return { offset: Number(query?.offset ?? 0), limit: limit === 0 ? DEFAULT_LIMIT : limit, asc: query?.asc ?? true };
}

export const USER_STATES: Record<string, string> = { USER_STATE_ACTIVE: 'active', USER_STATE_INACTIVE: 'inactive', USER_STATE_LOCKED: 'locked' };
export const USER_TYPES: Record<string, 'human' | 'machine'> = { TYPE_HUMAN: 'human', TYPE_MACHINE: 'machine' };

/** One page of results and how many there are in all (a uint64, so a string in JSON). */
export interface SearchResult<T> {
  details: { totalResult: string; viewTimestamp: string };
  result: T[];
}
