import { spawnSync } from 'node:child_process';
import { globSync, readFileSync } from 'node:fs';

// `npm run test:fast`, the inner loop: every test file except those that
// drive a browser (they import test/support/browser.ts) and the fault and
// scale-out tests, which start and kill stores and nodes of their own. The
// full suite (`npm test`) stays what CI runs.

const SLOW_FOLDERS = ['test/faults/', 'test/scale/'];
const files = globSync('test/**/*.test.ts')
  .filter((file) => !SLOW_FOLDERS.some((folder) => file.startsWith(folder)))
  .filter((file) => !/from '\.\.\/support\/browser\.ts'/.test(readFileSync(file, 'utf8')))
  .sort();
const run = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=120000', ...files], { stdio: 'inherit' });
process.exit(run.status ?? 1);
