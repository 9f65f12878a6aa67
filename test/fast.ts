import { spawnSync } from 'node:child_process';
import { suiteFiles, TEST_TIMEOUT_MS, useCompileCache } from './suite-files.ts';

// `npm run test:fast`, the inner loop: the light test files only
// (test/suite-files.ts), three at a time, and the hostile-request fuzz with
// 2,000 requests instead of 10,000 (FUZZ_BATCHES, unless set). The full
// suite (`npm test`, test/run.ts) stays what CI runs.
//
// Three files at a time on two cores: several of the longest files spend
// most of their time waiting (retry delays, lock and key expiry, the
// unlock sweep), and a third file uses the core they leave idle
// (docs/testing.md has the measurements).

useCompileCache();
process.env.FUZZ_BATCHES ??= '100';

const CONCURRENCY = 3;

const run = spawnSync(process.execPath, ['--test', `--test-concurrency=${CONCURRENCY}`, `--test-timeout=${TEST_TIMEOUT_MS}`, ...suiteFiles().light], {
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
