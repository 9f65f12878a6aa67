import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

// Anything that could carry a credential is censored before it is written,
// wherever a careless log call might put it.
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.secret',
  '*.clientSecret',
  '*.client_secret',
  '*.privateKey',
  '*.masterKey',
];

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'portcullis' }, redact: { paths: REDACT, censor: '[redacted]' } });
}
