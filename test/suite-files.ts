import { globSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

// Which test files may share the machine's two cores with another file, and
// which take a core (and timers) of their own: files that drive a browser
// (they import test/support/browser.ts), the fault and scale-out tests,
// which start and kill stores and nodes of their own, and the server's own
// start, stop and terminal tests, which start, signal and kill processes.

const HEAVY_FOLDERS = ['test/faults/', 'test/scale/', 'test/server/'];

const drivesBrowser = (file: string) => /from '\.\.\/support\/browser\.ts'/.test(readFileSync(file, 'utf8'));

export function suiteFiles(): { light: string[]; heavy: string[] } {
  const all = globSync('test/**/*.test.ts').sort();
  const heavy = all.filter((file) => HEAVY_FOLDERS.some((folder) => file.startsWith(folder)) || drivesBrowser(file));
  return { light: all.filter((file) => !heavy.includes(file)), heavy };
}

/**
 * Every test file is a process of its own that compiles the same modules
 * (and strips their types); Node's compile cache keeps that work for the
 * next one, and for the servers tests start. Keyed by the sources' content,
 * so it is never stale.
 */
export function useCompileCache(): void {
  process.env.NODE_COMPILE_CACHE ??= resolve('node_modules/.cache/node-compile');
}

/** Per test file: a test stuck on a hang fails instead of holding the run. */
export const TEST_TIMEOUT_MS = 120_000;
