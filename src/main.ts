import { ConfigError, loadConfig } from '../config/load.ts';
import { createLogger, logFormatFor } from './logger.ts';
import { DatabaseUnavailable } from './storage/database.ts';
import { RedisUnavailable } from './storage/redis.ts';
import { MasterKeyMismatch } from './keys/master-key.ts';

// Errors an operator can fix get one clear line; anything else is a bug and
// keeps its stack.
const OPERATOR_ERRORS = [ConfigError, DatabaseUnavailable, RedisUnavailable, MasterKeyMismatch];

function fail(err: unknown): never {
  if (OPERATOR_ERRORS.some((type) => err instanceof type)) {
    process.stderr.write(`portcullis: ${(err as Error).message}\n`);
  } else if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    process.stderr.write(`portcullis: port already in use (${(err as Error).message})\n`);
  } else {
    process.stderr.write(`portcullis: start-up failed: ${(err as Error).stack ?? String(err)}\n`);
  }
  process.exit(1);
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, logFormatFor(config.logFormat, Boolean(process.stdout.isTTY)));
  // Loaded after the settings are checked: a wrong setting is told in a
  // fraction of the time the whole service takes to load.
  const { startServer } = await import('./server.ts');
  const running = await startServer(config, log);
  log.info(
    { url: running.url, issuer: config.issuer, database: running.db.kind, redis: Boolean(running.redis) },
    `listening; discovery at ${config.issuer}/.well-known/openid-configuration`,
  );

  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down');
    running.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch(fail);
