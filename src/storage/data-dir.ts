import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * DATA_DIR holds the embedded database, the master key and the first-start
 * credentials: only the service's user may read it (folders 0700, files
 * 0600). The umask makes the files this process creates private. PGlite is
 * the exception: its file system layer sets each new file's mode itself
 * (0666), past the umask, so its folder is tightened again once it has
 * started (`restrictDataDir` after start-up); any file it makes later stays
 * private all the same, inside a folder only the service's user may enter.
 * What an older version left with looser modes is tightened too — only what
 * this service writes there, in case DATA_DIR names a folder shared with
 * other things.
 */
export function prepareDataDir(dataDir: string): string {
  process.umask(0o077);
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  restrictDataDir(dir);
  return dir;
}

export function restrictDataDir(dataDir: string): void {
  const dir = resolve(dataDir);
  chmodSync(dir, 0o700);
  for (const name of OWN_ENTRIES) {
    if (existsSync(join(dir, name))) tighten(join(dir, name));
  }
}

/** What the service keeps in DATA_DIR: the embedded database, the master key, the first-start credentials, the mails written without SMTP. */
const OWN_ENTRIES = ['pglite', 'master.key', 'admin.pat', 'admin-key.json', 'admin.password', 'outbox'];

function tighten(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    if ((stat.mode & 0o777) !== 0o700) chmodSync(path, 0o700);
    for (const entry of readdirSync(path)) tighten(join(path, entry));
  } else if ((stat.mode & 0o777) !== 0o600) {
    chmodSync(path, 0o600);
  }
}
