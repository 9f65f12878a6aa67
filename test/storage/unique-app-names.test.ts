import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDatabase, type Database } from '../../src/storage/database.ts';
import { listMigrations, migrate } from '../../src/storage/migrate.ts';
import { DATABASE_URL, uniqueName } from '../support/stores.ts';

// Migration 0061 makes app names unique within a project on a database of
// an earlier version that already holds duplicates (docs/api/projects-apps.md).

const UNIQUE_NAMES = 61;

async function openEmpty(): Promise<{ db: Database; cleanup(): Promise<void> }> {
  if (DATABASE_URL) {
    const schema = uniqueName('t');
    const db = await openDatabase({ databaseUrl: DATABASE_URL, databaseSchema: schema, databasePoolSize: 2, dataDir: tmpdir() });
    return {
      db,
      async cleanup() {
        await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await db.close();
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-test-'));
  const db = await openDatabase({ databaseSchema: 'public', databasePoolSize: 1, dataDir });
  return {
    db,
    async cleanup() {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

test('earlier duplicate app names keep the oldest, the others get their id appended; then a duplicate is refused', async () => {
  const { db, cleanup } = await openEmpty();
  try {
    await migrate(
      db,
      listMigrations().filter((m) => m.version < UNIQUE_NAMES),
    );
    await db.query("INSERT INTO orgs (id, name, sequence, creation_date, change_date) VALUES ('o1', 'o1', 1, now(), now())");
    for (const id of ['p1', 'p2']) {
      await db.query("INSERT INTO projects (id, org_id, name, sequence, creation_date, change_date) VALUES ($1, 'o1', $1, 1, now(), now())", [id]);
    }
    const app = (id: string, projectId: string, name: string, created: string) =>
      db.query(
        `INSERT INTO apps (id, project_id, org_id, client_id, name, redirect_uris, post_logout_redirect_uris, response_types, grant_types,
                           app_type, auth_method, access_token_type, sequence, creation_date, change_date)
         VALUES ($1, $2, 'o1', $1, $3, '{}', '{}', '{}', '{}', 'OIDC_APP_TYPE_WEB', 'OIDC_AUTH_METHOD_TYPE_BASIC', 'OIDC_TOKEN_TYPE_BEARER', 1, $4, $4)`,
        [id, projectId, name, created],
      );
    await app('a3', 'p1', 'Web', '2026-01-03T00:00:00Z');
    await app('a1', 'p1', 'Web', '2026-01-01T00:00:00Z');
    await app('a2', 'p1', 'Web', '2026-01-02T00:00:00Z');
    await app('a4', 'p2', 'Web', '2026-01-04T00:00:00Z');
    await app('a5', 'p1', 'web', '2026-01-05T00:00:00Z');

    assert.deepEqual(
      await migrate(db),
      listMigrations()
        .filter((m) => m.version >= UNIQUE_NAMES)
        .map((m) => m.version),
    );
    const { rows } = await db.query<{ id: string; name: string }>('SELECT id, name FROM apps ORDER BY id');
    assert.deepEqual(rows, [
      { id: 'a1', name: 'Web' },
      { id: 'a2', name: 'Web (a2)' },
      { id: 'a3', name: 'Web (a3)' },
      { id: 'a4', name: 'Web' },
      { id: 'a5', name: 'web' },
    ]);
    await assert.rejects(app('a6', 'p1', 'Web', '2026-01-06T00:00:00Z'), 'the index refuses a duplicate even past the command');
  } finally {
    await cleanup();
  }
});
