import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { asOutage } from './outage.ts';

/** Anything that runs one parameterised statement. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: Row[]; rowCount: number }>;
}

/** The handle a transaction callback works with. */
export interface Transaction extends Queryable {
  exec(sql: string): Promise<void>;
}

/**
 * The one storage handle the rest of the code sees: a real PostgreSQL pool or
 * the embedded PGlite, with the same SQL and the same migrations.
 */
export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs a multi-statement script (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown when the database cannot be reached or opened at start-up. */
export class DatabaseUnavailable extends Error {
  override name = 'DatabaseUnavailable';
}

export interface DatabaseOptions {
  databaseUrl?: string;
  databaseSchema: string;
  databasePoolSize: number;
  dataDir: string;
}

function describeConnectError(err: unknown): string {
  const e = err as { code?: string; message?: string };
  if (e.code === 'ECONNREFUSED') return 'connection refused';
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return 'host not found';
  if (e.code === 'ETIMEDOUT') return 'connection timed out';
  if (e.code === '3D000') return 'database does not exist';
  if (e.code === '28P01' || e.code === '28000') return 'authentication failed';
  return e.code ?? 'error';
}

async function openPostgres(options: DatabaseOptions & { databaseUrl: string }): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.databasePoolSize,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    // Every connection works in our schema; the schema is validated as a
    // bare identifier by the configuration, so quoting is enough here.
    options: `-c search_path="${options.databaseSchema}"`,
  });
  // An idle client losing its connection must not crash the process; the
  // pool replaces it and the next query reports the outage.
  pool.on('error', () => {});

  try {
    const client = await pool.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.databaseSchema}"`);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => {});
    const code = (err as { code?: string }).code;
    if (code === '42P06' || code === '23505') {
      // Another node created the schema at the same moment (PostgreSQL
      // reports the race as duplicate schema or as a unique violation).
      return openPostgres(options);
    }
    throw new DatabaseUnavailable(`PostgreSQL at DATABASE_URL is unreachable: ${describeConnectError(err)}`);
  }

  // Errors that mean PostgreSQL is unreachable become StoreUnavailable (503);
  // errors of a statement (constraint violations, …) stay what they are.
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      throw asOutage('postgres', err);
    }
  };
  const ignoreConnectionError = () => {};

  const db: Database = {
    kind: 'postgres',
    query: (sql, params) =>
      guard(async () => {
        const result = await pool.query(sql, params as unknown[]);
        return { rows: result.rows, rowCount: result.rowCount ?? 0 };
      }),
    exec: (sql) =>
      guard(async () => {
        await pool.query(sql);
      }),
    async transaction(fn) {
      const client = await guard(() => pool.connect());
      // A checked-out client whose connection drops between two statements
      // emits `error`; the pool listens only to idle clients, and an
      // unheard `error` would end the process. The next statement fails.
      client.on('error', ignoreConnectionError);
      let broken: unknown;
      try {
        const tx: Transaction = {
          query: (sql, params) =>
            guard(async () => {
              const result = await client.query(sql, params as unknown[]);
              return { rows: result.rows, rowCount: result.rowCount ?? 0 };
            }),
          exec: (sql) =>
            guard(async () => {
              await client.query(sql);
            }),
        };
        await tx.exec('BEGIN');
        const value = await fn(tx);
        // A COMMIT whose answer is lost leaves the outcome unknown to us; the
        // caller gets 503 and a retry of a create meets ALREADY_EXISTS when it
        // did commit (docs/operations.md, "Failure modes").
        await tx.exec('COMMIT');
        return value;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
          broken = rollbackErr;
        });
        throw err;
      } finally {
        client.off('error', ignoreConnectionError);
        // A client whose connection failed is discarded, not reused.
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
    async ping() {
      await guard(() => pool.query('SELECT 1'));
    },
    async close() {
      await pool.end();
    },
  };
  return db;
}

async function openPglite(options: DatabaseOptions): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  const dir = resolve(options.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  let lite: InstanceType<typeof PGlite>;
  try {
    lite = await PGlite.create(dir);
  } catch (err) {
    throw new DatabaseUnavailable(`the embedded database in ${dir} cannot be opened: ${(err as Error).message}`);
  }
  await lite.exec(`CREATE SCHEMA IF NOT EXISTS "${options.databaseSchema}"; SET search_path TO "${options.databaseSchema}"`);

  const run: Queryable['query'] = async (sql, params) => {
    const result = await lite.query(sql, params as unknown[]);
    return { rows: result.rows as never[], rowCount: result.affectedRows ?? result.rows.length };
  };

  return {
    kind: 'pglite',
    query: run,
    async exec(sql) {
      await lite.exec(sql);
    },
    async transaction(fn) {
      return lite.transaction(async (t) =>
        fn({
          async query(sql, params) {
            const result = await t.query(sql, params as unknown[]);
            return { rows: result.rows as never[], rowCount: result.affectedRows ?? result.rows.length };
          },
          async exec(sql) {
            await t.exec(sql);
          },
        }),
      );
    },
    async ping() {
      await lite.query('SELECT 1');
    },
    async close() {
      await lite.close();
    },
  };
}

/** Opens PostgreSQL when DATABASE_URL is set, the embedded PGlite in DATA_DIR otherwise. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres({ ...options, databaseUrl: options.databaseUrl }) : openPglite(options);
}
