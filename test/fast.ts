import { spawnSync } from 'node:child_process';
import { suiteFiles, TEST_TIMEOUT_MS } from './suite-files.ts';

// `npm run test:fast`, the inner loop: the light test files only
// (test/suite-files.ts), two at a time. The full suite (`npm test`,
// test/run.ts) stays what CI runs.

const run = spawnSync(process.execPath, ['--test', '--test-concurrency=2', `--test-timeout=${TEST_TIMEOUT_MS}`, ...suiteFiles().light], {
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
