import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { Readable } from 'node:stream';
import { suiteFiles, TEST_TIMEOUT_MS, useCompileCache } from './suite-files.ts';

// `npm test`: the whole suite in one report. The light files run two at a
// time (as `npm run test:fast` does); the browser, fault and scale-out files
// one at a time after them, since they time failovers and propagation and
// each drives a browser or several processes of its own. The two runs'
// events go to one spec reporter, with one summary of both at the end
// (the lines CI reads: "ℹ tests N", "ℹ pass N", "ℹ fail N", ...).

interface TestEvent {
  type: string;
  data: { file?: string; message?: string; nesting?: number; count?: number; counts?: Counts; duration_ms?: number; success?: boolean };
}
interface Counts {
  tests: number;
  suites: number;
  passed: number;
  failed: number;
  cancelled: number;
  skipped: number;
  todo: number;
  topLevel: number;
}

const SUMMARY_LINE = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /;
const total: Counts = { tests: 0, suites: 0, passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0, topLevel: 0 };
const started = performance.now();

/** A run's events less its own closing summary (the root's: no file), whose counts add to the total. */
async function* eventsOf(files: string[], concurrency: number): AsyncGenerator<TestEvent> {
  if (!files.length) return;
  for await (const event of run({ files, concurrency, timeout: TEST_TIMEOUT_MS }) as AsyncIterable<TestEvent>) {
    const root = event.data.file === undefined;
    if (root && event.type === 'test:summary') {
      for (const key of Object.keys(total) as Array<keyof Counts>) total[key] += event.data.counts?.[key] ?? 0;
      continue;
    }
    if (root && event.type === 'test:plan' && event.data.nesting === 0) continue;
    if (root && event.type === 'test:diagnostic' && SUMMARY_LINE.test(event.data.message ?? '')) continue;
    yield event;
  }
}

function diagnostic(message: string): TestEvent {
  return { type: 'test:diagnostic', data: { nesting: 0, message } };
}

async function* suite(): AsyncGenerator<TestEvent> {
  useCompileCache();
  const { light, heavy } = suiteFiles();
  yield* eventsOf(light, 2);
  yield* eventsOf(heavy, 1);
  const duration = performance.now() - started;
  yield { type: 'test:plan', data: { nesting: 0, count: total.topLevel } };
  for (const line of [
    `tests ${total.tests}`,
    `suites ${total.suites}`,
    `pass ${total.passed}`,
    `fail ${total.failed}`,
    `cancelled ${total.cancelled}`,
    `skipped ${total.skipped}`,
    `todo ${total.todo}`,
    `duration_ms ${duration}`,
  ])
    yield diagnostic(line);
  process.exitCode = total.failed || total.cancelled ? 1 : 0;
}

Readable.from(suite()).compose(new spec()).pipe(process.stdout);
