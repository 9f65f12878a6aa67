import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeMasterKey } from '../../config/load.ts';
import type { Queryable } from '../storage/database.ts';

/** The master key does not fit the database it is used with. */
export class MasterKeyMismatch extends Error {
  override name = 'MasterKeyMismatch';
}

/**
 * MASTER_KEY when given; otherwise the key in DATA_DIR/master.key, generated
 * (mode 0600) on the first start. A multi-node deployment must set MASTER_KEY
 * so every node holds the same key.
 */
export function resolveMasterKey(configured: Buffer | undefined, dataDir: string): { key: Buffer; source: 'env' | 'file' | 'generated'; path?: string } {
  if (configured) return { key: configured, source: 'env' };
  const path = join(dataDir, 'master.key');
  if (existsSync(path)) return { key: decodeMasterKey(readFileSync(path, 'utf8')), source: 'file', path };
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return { key, source: 'generated', path };
}

/** A purpose-bound key derived from the master key (HKDF-SHA256). */
export function deriveKey(master: Buffer, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `portcullis ${purpose}`, length));
}

function checkValue(master: Buffer): Buffer {
  return createHmac('sha256', deriveKey(master, 'master key check')).update('portcullis').digest();
}

/**
 * Records the master key's check value on first use and refuses a different
 * key afterwards, so a node with the wrong MASTER_KEY stops at start-up
 * rather than failing to decrypt signing keys under load.
 */
export async function verifyMasterKey(db: Queryable, master: Buffer): Promise<void> {
  const mac = checkValue(master);
  await db.query('INSERT INTO master_key_check (check_mac) VALUES ($1) ON CONFLICT (id) DO NOTHING', [mac]);
  const { rows } = await db.query<{ check_mac: Uint8Array }>('SELECT check_mac FROM master_key_check');
  const stored = Buffer.from(rows[0]!.check_mac);
  if (stored.length !== mac.length || !timingSafeEqual(stored, mac)) {
    throw new MasterKeyMismatch('MASTER_KEY does not match the key this database was initialised with');
  }
}
