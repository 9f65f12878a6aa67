/** How the connection to the SMTP server is secured. */
export type SmtpTls = 'none' | 'starttls' | 'implicit';

/** One SMTP server to send through (from SMTP_URL, docs/operations.md "Mail"). */
export interface SmtpSettings {
  host: string;
  port: number;
  tls: SmtpTls;
  user?: string;
  /** Never logged. */
  password?: string;
  senderAddress: string;
  senderName?: string;
}

/** Why an SMTP_URL is refused; never carries the URL itself, which may hold a password. */
export class SmtpUrlError extends Error {
  override name = 'SmtpUrlError';
}

const DEFAULT_PORTS = { 'smtp:': 587, 'smtps:': 465 } as const;

/**
 * `smtp://user:pass@host:587` (STARTTLS required; `?tls=none` for a local
 * server without TLS) or `smtps://user:pass@host:465` (TLS from the first
 * byte, RFC 8314). User and password are percent-decoded.
 */
export function parseSmtpUrl(value: string): Omit<SmtpSettings, 'senderAddress' | 'senderName'> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SmtpUrlError('is not a valid URL');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new SmtpUrlError('must start with smtp:// or smtps://');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw new SmtpUrlError('names no host');
  if (url.pathname && url.pathname !== '/') throw new SmtpUrlError('must not have a path');
  if (url.hash) throw new SmtpUrlError('must not have a fragment');
  const options = [...url.searchParams.keys()];
  if (options.some((key) => key !== 'tls') || url.searchParams.getAll('tls').length > 1) throw new SmtpUrlError('takes no option but tls=none');
  const plain = url.searchParams.get('tls');
  if (plain !== null && (plain !== 'none' || url.protocol !== 'smtp:')) throw new SmtpUrlError('takes tls=none only with smtp://');
  let user: string | undefined;
  let password: string | undefined;
  try {
    user = url.username ? decodeURIComponent(url.username) : undefined;
    password = url.password ? decodeURIComponent(url.password) : undefined;
  } catch {
    throw new SmtpUrlError('has a badly encoded user or password');
  }
  if (password !== undefined && user === undefined) throw new SmtpUrlError('has a password without a user');
  return {
    host,
    port: url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol],
    tls: url.protocol === 'smtps:' ? 'implicit' : plain === 'none' ? 'none' : 'starttls',
    ...(user === undefined ? {} : { user }),
    ...(password === undefined ? {} : { password }),
  };
}

/** `SMTP_FROM`: `noreply@example.com` or `Example <noreply@example.com>`. */
export function parseSender(value: string): { senderAddress: string; senderName?: string } {
  const named = /^\s*([^<>"\r\n]*?)\s*<([^<>\s@]+@[^<>\s@]+)>\s*$/.exec(value);
  if (named) return named[1] ? { senderAddress: named[2]!, senderName: named[1] } : { senderAddress: named[2]! };
  if (/^[^<>\s@]+@[^<>\s@]+$/.test(value)) return { senderAddress: value };
  throw new SmtpUrlError('must be an address such as noreply@example.com or "Example <noreply@example.com>"');
}
