import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';
import { lockForTransaction } from './advisory-lock.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The versioned migrations shipped with this build, in order: `NNNN_name.sql`. */
export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(new URL(file, `file://${dir}`), 'utf8'),
    }));
}

/**
 * Applies the migrations not yet applied, all in one transaction under a
 * transaction-scoped advisory lock: nodes starting at the same moment queue
 * on the lock, and the later ones find nothing left to do.
 */
export async function migrate(db: Database, migrations = listMigrations()): Promise<number[]> {
  return db.transaction(async (tx) => {
    await lockForTransaction(tx, 'migrate');
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => Number(row.version)));
    const done: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      done.push(migration.version);
    }
    return done;
  });
}
