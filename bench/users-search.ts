import pg from 'pg';
import type { Feeder, HttpLoad } from './scenarios.ts';

// The users_search scenario: one org with many users, searched by login-name
// prefix as the console's search box does. On PostgreSQL the users are
// written straight into the server's schema in one statement (the API would
// take minutes for 100,000); on the embedded database, which only the server
// process can open, through the API.

export const SEARCH_USER_PREFIX = 'search-';
const DIGITS = 6;

const userName = (i: number) => `${SEARCH_USER_PREFIX}${String(i).padStart(DIGITS, '0')}`;

/** Inserts `count` human users into the first org of the server's schema. */
export async function insertSearchUsers(databaseUrl: string, schema: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${schema}"`);
    await client.query(
      `INSERT INTO users (id, org_id, type, user_name, first_name, last_name, display_name, email, email_verified, sequence, creation_date, change_date)
       SELECT 'bench-search-' || i, (SELECT default_org_id FROM instance LIMIT 1), 'human', $1 || lpad(i::text, $2, '0'),
              'Search', 'User ' || i, 'Search User ' || i, $1 || lpad(i::text, $2, '0') || '@bench.test', true, 1, now(), now()
         FROM generate_series(0, $3 - 1) AS i`,
      [SEARCH_USER_PREFIX, DIGITS, count],
    );
    await client.query('ANALYZE users');
  } finally {
    await client.end();
  }
}

/** Adds `count` machine users through the admin API, a few at a time. */
export async function addSearchUsersThroughApi(
  api: (method: string, path: string, body?: unknown) => Promise<unknown>,
  count: number,
  concurrency = 8,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await api('POST', '/management/v1/users/machine', { userName: userName(i), name: `Search User ${i}` });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * Endless random prefixes that each match ten users (the last digit left
 * open), so every request walks the index to a different place.
 */
function prefixFeeder(count: number): Feeder {
  const groups = Math.max(1, Math.floor(count / 10));
  return {
    next: () => userName(Math.floor(Math.random() * groups) * 10).slice(0, -1),
    remaining: () => Number.POSITIVE_INFINITY,
  };
}

export function usersSearchLoad(pat: string, count: number): HttpLoad {
  return {
    method: 'POST',
    path: '/management/v1/users/_search',
    headers: { authorization: `Bearer ${pat}`, 'content-type': 'application/json' },
    bodyFrom: {
      feeder: prefixFeeder(count),
      build: (prefix) =>
        JSON.stringify({
          query: { offset: '0', limit: 50, asc: true },
          queries: [{ userNameQuery: { userName: prefix, method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }],
        }),
    },
    verify: (body) => body.includes('"totalResult":"10"'),
  };
}
