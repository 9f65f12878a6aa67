import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDatabase, type Database } from '../../src/storage/database.ts';
import { listMigrations, migrate } from '../../src/storage/migrate.ts';
import { DATABASE_URL, uniqueName } from '../support/stores.ts';

// Migration 0045 makes project names unique within an org on a database of
// an earlier version that already holds duplicates (docs/api/projects-apps.md).

const UNIQUE_NAMES = 45;

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

test('earlier duplicates keep the oldest name, the others get their id appended; then a duplicate is refused', async () => {
  const { db, cleanup } = await openEmpty();
  try {
    await migrate(
      db,
      listMigrations().filter((m) => m.version < UNIQUE_NAMES),
    );
    const org = (id: string) => db.query('INSERT INTO orgs (id, name, sequence, creation_date, change_date) VALUES ($1, $1, 1, now(), now())', [id]);
    await org('o1');
    await org('o2');
    const project = (id: string, orgId: string, name: string, created: string) =>
      db.query('INSERT INTO projects (id, org_id, name, sequence, creation_date, change_date) VALUES ($1, $2, $3, 1, $4, $4)', [id, orgId, name, created]);
    await project('p3', 'o1', 'Shop', '2026-01-03T00:00:00Z');
    await project('p1', 'o1', 'Shop', '2026-01-01T00:00:00Z');
    await project('p2', 'o1', 'Shop', '2026-01-02T00:00:00Z');
    await project('p4', 'o2', 'Shop', '2026-01-04T00:00:00Z');
    await project('p5', 'o1', 'shop', '2026-01-05T00:00:00Z');

    assert.deepEqual(await migrate(db), [
      ...listMigrations()
        .filter((m) => m.version >= UNIQUE_NAMES)
        .map((m) => m.version),
    ]);
    const { rows } = await db.query<{ id: string; name: string }>('SELECT id, name FROM projects ORDER BY id');
    assert.deepEqual(rows, [
      { id: 'p1', name: 'Shop' },
      { id: 'p2', name: 'Shop (p2)' },
      { id: 'p3', name: 'Shop (p3)' },
      { id: 'p4', name: 'Shop' },
      { id: 'p5', name: 'shop' },
    ]);
    await assert.rejects(project('p6', 'o1', 'Shop', '2026-01-06T00:00:00Z'), 'the index refuses a duplicate even past the command');
  } finally {
    await cleanup();
  }
});
