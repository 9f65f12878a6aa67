import { pino, type Logger } from 'pino';
import { PinoPretty } from 'pino-pretty';

export type { Logger } from 'pino';

// Anything that could carry a credential is censored before it is written,
// wherever a careless log call might put it.
// pino's `*.name` matches one level down only, so each name is listed at
// the top level too.
const SECRET_FIELDS = ['password', 'token', 'secret', 'clientSecret', 'client_secret', 'privateKey', 'masterKey'];
const REDACT = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', ...SECRET_FIELDS, ...SECRET_FIELDS.map((name) => `*.${name}`)];

export type LogFormat = 'json' | 'pretty';

/** `LOG_FORMAT`: `auto` is pretty for a person at a terminal, JSON for a log collector. */
export function logFormatFor(setting: 'auto' | LogFormat, stdoutIsTty: boolean): LogFormat {
  return setting === 'auto' ? (stdoutIsTty ? 'pretty' : 'json') : setting;
}

/**
 * The process's logger: JSON lines on stdout, or the same records made
 * readable by pino-pretty (local time, level names, colours, one line a record) — written
 * synchronously in this thread, so nothing is lost at exit. `destination`
 * replaces stdout (tests).
 */
export function createLogger(level: string, format: LogFormat = 'json', destination?: NodeJS.WritableStream): Logger {
  const options = { level, base: { service: 'portcullis' }, redact: { paths: REDACT, censor: '[redacted]' } };
  if (format === 'pretty') {
    const pretty = PinoPretty({
      colorize: destination === undefined && Boolean(process.stdout.isTTY),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,service',
      singleLine: true,
      sync: true,
      ...(destination ? { destination } : {}),
    });
    return pino(options, pretty);
  }
  return destination ? pino(options, destination) : pino(options);
}
