import { globSync, readFileSync } from 'node:fs';

// Which test files may share the machine's two cores with another file, and
// which take a core (and timers) of their own: files that drive a browser
// (they import test/support/browser.ts) and the fault and scale-out tests,
// which start and kill stores and nodes of their own.

const HEAVY_FOLDERS = ['test/faults/', 'test/scale/'];

const drivesBrowser = (file: string) => /from '\.\.\/support\/browser\.ts'/.test(readFileSync(file, 'utf8'));

export function suiteFiles(): { light: string[]; heavy: string[] } {
  const all = globSync('test/**/*.test.ts').sort();
  const heavy = all.filter((file) => HEAVY_FOLDERS.some((folder) => file.startsWith(folder)) || drivesBrowser(file));
  return { light: all.filter((file) => !heavy.includes(file)), heavy };
}

/** Per test file: a test stuck on a hang fails instead of holding the run. */
export const TEST_TIMEOUT_MS = 120_000;
