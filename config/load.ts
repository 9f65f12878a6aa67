import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { settings, type Config, type Setting } from './settings.ts';
import { parseSender, parseSmtpUrl, SmtpUrlError } from '../src/outbound/smtp-settings.ts';

export type { Config } from './settings.ts';

/** A setting that stops the process; the message names the setting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Raw = Record<string, unknown>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(settings.map((s) => [s.key, s.schema])),
};

const ajv = addFormats(new Ajv({ allErrors: false, coerceTypes: true, useDefaults: true }));
const validate = ajv.compile(schema);

const DURATION = /^(\d+)\s*(s|m|h|d)?$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

function parseDuration(setting: Setting, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = DURATION.exec(value.trim());
  if (!match) throw new ConfigError(`${setting.env} must be a duration such as 300, 15m, 12h or 30d (got "${value}")`);
  return Number(match[1]) * UNIT_SECONDS[match[2] ?? 's']!;
}

function readConfigFile(path: string): Raw {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`CONFIG_FILE ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let parsed: unknown;
  try {
    parsed = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(`CONFIG_FILE ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`CONFIG_FILE ${path} must hold an object of settings`);
  const known = new Set(settings.map((s) => s.key as string));
  for (const key of Object.keys(parsed)) {
    if (!known.has(key)) throw new ConfigError(`CONFIG_FILE ${path}: unknown setting "${key}"`);
  }
  return parsed as Raw;
}

/** Master key: exactly 32 bytes, written as 64 hex characters or as base64 / base64url. */
export function decodeMasterKey(text: string): Buffer {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64url')
      : undefined;
  if (bytes?.length !== 32) {
    throw new ConfigError(
      `MASTER_KEY must be 32 bytes written as 64 hex characters or base64 (got ${bytes ? `${bytes.length} bytes` : 'neither'}); generate one with: openssl rand -hex 32`,
    );
  }
  return bytes;
}

function checkIssuer(issuer: string): string {
  const url = URL.parse(issuer);
  if (!url?.hostname) throw new ConfigError(`ISSUER is not a valid URL (got "${issuer}")`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError(`ISSUER must be an http or https URL (got "${issuer}")`);
  if (url.username || url.password) throw new ConfigError('ISSUER must not contain credentials');
  const bare = issuer.replace(/\/$/, '');
  if (url.pathname !== '/' || url.search || url.hash || bare.toLowerCase() !== url.origin.toLowerCase()) {
    throw new ConfigError(`ISSUER must be a bare origin such as https://id.example.com, without path, query or fragment (got "${issuer}")`);
  }
  return url.origin;
}

function checkUrl(name: string, value: string | undefined): void {
  if (value === undefined) return;
  try {
    const url = new URL(value);
    if (!url.hostname) throw new Error('no host');
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
}

type SmtpServer = ReturnType<typeof parseSmtpUrl>;
type MailFrom = ReturnType<typeof parseSender>;

/** A parsed setting, or a ConfigError naming it; the message never quotes the value (SMTP_URL may hold a password). */
function parsed<T>(name: string, value: string | undefined, parse: (value: string) => T): T | undefined {
  try {
    return value === undefined ? undefined : parse(value);
  } catch (err) {
    throw err instanceof SmtpUrlError ? new ConfigError(`${name} ${err.message}`) : err;
  }
}

/** SMTP_URL and SMTP_FROM, refused at start when malformed. */
function mailSettings(smtpUrl: string | undefined, smtpFrom: string | undefined, instanceDomain: string): { smtp?: SmtpServer; mailFrom: MailFrom } {
  const smtp = parsed('SMTP_URL', smtpUrl, parseSmtpUrl);
  const mailFrom = parsed('SMTP_FROM', smtpFrom, parseSender) ?? { senderAddress: `noreply@${instanceDomain}` };
  return smtp ? { smtp, mailFrom } : { mailFrom };
}

/** One way to reach Redis at most; a Sentinel setup names its master. */
function checkRedisTopology(config: Config): void {
  const ways = [
    ['REDIS_URL', config.redisUrl],
    ['REDIS_SENTINELS', config.redisSentinels],
    ['REDIS_CLUSTER_NODES', config.redisClusterNodes],
  ]
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);
  if (ways.length > 1) throw new ConfigError(`${ways.join(' and ')} are exclusive: set one of them`);
  if (config.redisSentinels !== undefined && config.redisSentinelName === undefined)
    throw new ConfigError('REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the name of the master');
  if (config.redisSentinelName !== undefined && config.redisSentinels === undefined)
    throw new ConfigError('REDIS_SENTINEL_NAME is set without REDIS_SENTINELS');
  if (config.redisPassword !== undefined && ways[0] !== 'REDIS_SENTINELS' && ways[0] !== 'REDIS_CLUSTER_NODES') {
    throw new ConfigError('REDIS_PASSWORD is for REDIS_SENTINELS or REDIS_CLUSTER_NODES; put the password into REDIS_URL');
  }
}

export interface ConfigResult extends Omit<Config, 'masterKey' | 'instanceDomain' | 'webauthnRpId' | 'smtpUrl' | 'smtpFrom'> {
  masterKey?: Buffer;
  /** The SMTP server of SMTP_URL; none: mails go to the outbox folder unless the admin API sets one. */
  smtp?: SmtpServer;
  mailFrom: MailFrom;
  instanceDomain: string;
  webauthnRpId: string;
}

/**
 * A cross-site form POST carries only SameSite=None cookies, which browsers
 * accept only as Secure: the engine's POST methods need an https issuer.
 */
function checkPostMethods(enabled: boolean, issuer: string): void {
  if (enabled && new URL(issuer).protocol !== 'https:')
    throw new ConfigError(
      `ENABLE_HTTP_POST_METHODS needs an https ISSUER: its session cookie is SameSite=None, which browsers accept only as Secure (got "${issuer}")`,
    );
}

/** WebAuthn 5.1.3: the relying-party id is the origin's host or a registrable suffix of it; browsers refuse anything else. */
function checkRpId(rpId: string | undefined, issuer: string): string {
  const host = new URL(issuer).hostname.toLowerCase();
  const id = (rpId ?? host).toLowerCase();
  if (id !== host && !host.endsWith(`.${id}`))
    throw new ConfigError(`WEBAUTHN_RP_ID must be the ISSUER host (${host}) or a parent domain of it (got "${rpId}")`);
  return id;
}

/**
 * Builds the one configuration object from the environment and an optional
 * file (`CONFIG_FILE`, YAML or JSON, keys as in the settings catalogue).
 * Environment variables win over the file; empty variables count as unset.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ConfigResult {
  const fromFile = env.CONFIG_FILE ? readConfigFile(env.CONFIG_FILE) : {};
  const raw: Raw = { ...fromFile };
  for (const setting of settings) {
    const value = env[setting.env];
    if (value !== undefined && value !== '') raw[setting.key] = value;
  }
  for (const setting of settings) {
    const value = raw[setting.key];
    if (setting.duration && value !== undefined) raw[setting.key] = parseDuration(setting, value);
    // ajv would coerce "0x50", "1e3" or " 80 "; a number setting takes digits only.
    else if (setting.schema.type === 'integer' && typeof value === 'string' && !/^\d+$/.test(value)) {
      throw new ConfigError(`${setting.env} must be a whole number (got ${JSON.stringify(value)})`);
    }
  }

  if (!validate(raw)) {
    const error = validate.errors![0]!;
    const key = error.instancePath.slice(1).split('/')[0] ?? '';
    const setting = settings.find((s) => s.key === key);
    const name = setting?.env ?? (key || 'configuration');
    const shown = setting?.secret ? '' : ` (got ${JSON.stringify(raw[key])})`;
    throw new ConfigError(`${name} ${error.message ?? 'is invalid'}${shown}`);
  }

  const config = raw as unknown as Config;
  checkUrl('DATABASE_URL', config.databaseUrl);
  checkUrl('REDIS_URL', config.redisUrl);
  checkRedisTopology(config);
  const issuer = checkIssuer(config.issuer ?? `http://localhost:${config.port}`);
  checkPostMethods(config.enableHttpPostMethods, issuer);
  const masterKey = config.masterKey === undefined ? undefined : decodeMasterKey(config.masterKey);
  const instanceDomain = (config.instanceDomain ?? new URL(issuer).hostname).toLowerCase();
  const { smtpUrl, smtpFrom, ...rest } = config;
  return {
    ...rest,
    issuer,
    masterKey,
    instanceDomain,
    webauthnRpId: checkRpId(config.webauthnRpId, issuer),
    ...mailSettings(smtpUrl, smtpFrom, instanceDomain),
  };
}
