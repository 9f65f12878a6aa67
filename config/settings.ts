// The catalogue of settings: one row per setting, naming its environment
// variable, its key in the optional config file, its JSON Schema and default.
// README's configuration table documents this list (test/docs/readme.test.ts
// checks that every setting is there).

export interface Setting {
  /** Property of the typed Config object and key in the config file. */
  key: keyof Config;
  env: string;
  schema: Record<string, unknown>;
  description: string;
  /** Accepts `90`, `90s`, `15m`, `12h` or `30d`; stored as seconds. */
  duration?: true;
  /** Never echoed in an error message. */
  secret?: true;
}

export interface Config {
  port: number;
  host: string;
  issuer: string;
  dataDir: string;
  databaseUrl?: string;
  databaseSchema: string;
  databasePoolSize: number;
  redisUrl?: string;
  redisSentinels?: string;
  redisSentinelName?: string;
  redisClusterNodes?: string;
  redisPassword?: string;
  redisPrefix: string;
  masterKey?: string;
  trustProxy: boolean;
  enableHttpPostMethods: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  logFormat: 'auto' | 'json' | 'pretty';
  jwksMaxAge: number;
  accessTokenLifetime: number;
  idTokenLifetime: number;
  authorizationCodeLifetime: number;
  refreshTokenIdleLifetime: number;
  refreshTokenAbsoluteLifetime: number;
  sessionIdleLifetime: number;
  interactionLifetime: number;
  shutdownTimeout: number;
  keyRotationInterval: number;
  instanceDomain?: string;
  webauthnRpId?: string;
  instanceOrgName: string;
  adminPassword?: string;
  passwordMinLength: number;
  authFailureLimit: number;
  authFailureWindow: number;
  outboundAllowPrivate: boolean;
  smtpUrl?: string;
  smtpFrom?: string;
  actionsRetryFor: number;
  actionsRetryDelay: number;
  actionsRetryMaxDelay: number;
}

const duration = { type: 'integer', minimum: 1 };
/** `host:port,host:port`: host names, IPv4 addresses or bracketed IPv6 addresses. */
const hostPorts = {
  type: 'string',
  pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}(,(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5})*$',
  maxLength: 2000,
};

export const settings: Setting[] = [
  { key: 'port', env: 'PORT', schema: { type: 'integer', minimum: 1, maximum: 65535, default: 8080 }, description: 'TCP port to listen on' },
  { key: 'host', env: 'HOST', schema: { type: 'string', minLength: 1, default: '0.0.0.0' }, description: 'Interface to bind' },
  {
    key: 'issuer',
    env: 'ISSUER',
    schema: { type: 'string', format: 'uri' },
    description: 'Public base URL, e.g. `https://id.example.com` (default `http://localhost:{PORT}`); no path, query or fragment',
  },
  {
    key: 'dataDir',
    env: 'DATA_DIR',
    schema: { type: 'string', minLength: 1, default: './data' },
    description: 'Folder for the embedded database, the generated master key and first-start credentials',
  },
  {
    key: 'databaseUrl',
    env: 'DATABASE_URL',
    schema: { type: 'string', pattern: '^postgres(ql)?://' },
    description: 'PostgreSQL URL (`postgres://user:pass@host:5432/db`); unset: embedded PGlite in `DATA_DIR`',
    secret: true,
  },
  {
    key: 'databaseSchema',
    env: 'DATABASE_SCHEMA',
    schema: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,62}$', default: 'public' },
    description: 'PostgreSQL schema holding our tables (created if missing)',
  },
  {
    key: 'databasePoolSize',
    env: 'DATABASE_POOL_SIZE',
    schema: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
    description: 'Connections per node in the PostgreSQL pool',
  },
  {
    key: 'redisUrl',
    env: 'REDIS_URL',
    schema: { type: 'string', pattern: '^rediss?://' },
    description: 'Redis URL (`redis://host:6379/0`); unset: short-lived records go to PostgreSQL',
    secret: true,
  },
  {
    key: 'redisSentinels',
    env: 'REDIS_SENTINELS',
    schema: hostPorts,
    description: 'Redis Sentinel addresses (`host:port,host:port`), instead of `REDIS_URL`; needs `REDIS_SENTINEL_NAME`',
  },
  {
    key: 'redisSentinelName',
    env: 'REDIS_SENTINEL_NAME',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' },
    description: 'Name of the master the Sentinels watch (with `REDIS_SENTINELS`)',
  },
  {
    key: 'redisClusterNodes',
    env: 'REDIS_CLUSTER_NODES',
    schema: hostPorts,
    description: 'Some Redis Cluster nodes (`host:port,host:port`), instead of `REDIS_URL`; the others are discovered',
  },
  {
    key: 'redisPassword',
    env: 'REDIS_PASSWORD',
    schema: { type: 'string', minLength: 1, maxLength: 1024 },
    description: 'Password of the Redis servers reached through `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES` (`REDIS_URL` carries its own)',
    secret: true,
  },
  {
    key: 'redisPrefix',
    env: 'REDIS_PREFIX',
    schema: { type: 'string', pattern: '^[A-Za-z0-9:_.-]{0,64}$', default: 'portcullis:' },
    description: 'Prefix of every Redis key we write',
  },
  {
    key: 'masterKey',
    env: 'MASTER_KEY',
    schema: { type: 'string' },
    description:
      '32 bytes as 64 hex characters or base64; encrypts private keys at rest. Unset: generated once into `DATA_DIR/master.key`. Every node must share it',
    secret: true,
  },
  { key: 'trustProxy', env: 'TRUST_PROXY', schema: { type: 'boolean', default: false }, description: 'Honour `X-Forwarded-*` from a TLS-terminating proxy' },
  {
    key: 'enableHttpPostMethods',
    env: 'ENABLE_HTTP_POST_METHODS',
    schema: { type: 'boolean', default: false },
    description:
      'Accept POST at `/oauth/v2/authorize` and `/oidc/v1/end_session` (OIDC Core 3.1.2.1); the session cookie becomes `SameSite=None`, so it needs an https ISSUER. Off: POST there is 405',
  },
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    schema: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    description: 'Log level (the form of the lines: LOG_FORMAT)',
  },
  {
    key: 'logFormat',
    env: 'LOG_FORMAT',
    schema: { type: 'string', enum: ['auto', 'json', 'pretty'], default: 'auto' },
    description:
      'Log lines: `json` (one JSON object a line), `pretty` (coloured, readable lines by pino-pretty), `auto`: pretty when stdout is a terminal, JSON otherwise',
  },
  {
    key: 'jwksMaxAge',
    env: 'JWKS_MAX_AGE',
    schema: { ...duration, default: 300 },
    description: '`Cache-Control: max-age` of `/oauth/v2/keys`',
    duration: true,
  },
  { key: 'accessTokenLifetime', env: 'ACCESS_TOKEN_LIFETIME', schema: { ...duration, default: 43200 }, description: 'Access token lifetime', duration: true },
  { key: 'idTokenLifetime', env: 'ID_TOKEN_LIFETIME', schema: { ...duration, default: 43200 }, description: 'ID token lifetime', duration: true },
  {
    key: 'authorizationCodeLifetime',
    env: 'AUTHORIZATION_CODE_LIFETIME',
    schema: { ...duration, default: 600 },
    description: 'Authorization code lifetime',
    duration: true,
  },
  {
    key: 'refreshTokenIdleLifetime',
    env: 'REFRESH_TOKEN_IDLE_LIFETIME',
    schema: { ...duration, default: 2592000 },
    description: 'Refresh token lifetime without use',
    duration: true,
  },
  {
    key: 'refreshTokenAbsoluteLifetime',
    env: 'REFRESH_TOKEN_ABSOLUTE_LIFETIME',
    schema: { ...duration, default: 7776000 },
    description: 'Refresh token lifetime from the first login',
    duration: true,
  },
  {
    key: 'sessionIdleLifetime',
    env: 'SESSION_IDLE_LIFETIME',
    schema: { ...duration, default: 86400 },
    description: 'Login session lifetime without use',
    duration: true,
  },
  {
    key: 'interactionLifetime',
    env: 'INTERACTION_LIFETIME',
    schema: { ...duration, default: 3600 },
    description: 'Time a user has to finish a login page flow',
    duration: true,
  },
  {
    key: 'keyRotationInterval',
    env: 'KEY_ROTATION_INTERVAL',
    schema: { ...duration, minimum: 60, default: 86400 },
    description: 'How long a signing key signs before the next one takes over (at least 60 s)',
    duration: true,
  },
  {
    key: 'instanceDomain',
    env: 'INSTANCE_DOMAIN',
    schema: { type: 'string', format: 'hostname', maxLength: 200 },
    description: 'Domain under which org domains are generated (`{org-slug}.{INSTANCE_DOMAIN}`); default: the ISSUER host',
  },
  {
    key: 'webauthnRpId',
    env: 'WEBAUTHN_RP_ID',
    schema: { type: 'string', format: 'hostname', maxLength: 200 },
    description: 'WebAuthn relying-party id of passkeys: the ISSUER host or a parent domain of it; default: the ISSUER host',
  },
  {
    key: 'instanceOrgName',
    env: 'INSTANCE_ORG_NAME',
    schema: { type: 'string', minLength: 1, maxLength: 200, default: 'Default' },
    description: 'Name of the first org, created on first start',
  },
  {
    key: 'adminPassword',
    env: 'ADMIN_PASSWORD',
    schema: { type: 'string', minLength: 8, maxLength: 1024 },
    description: 'Password of the first admin user `admin@{first org domain}`; unset: generated into `DATA_DIR/admin.password`',
    secret: true,
  },
  {
    key: 'passwordMinLength',
    env: 'PASSWORD_MIN_LENGTH',
    schema: { type: 'integer', minimum: 1, maximum: 128, default: 8 },
    description: 'Password complexity policy: the built-in `minLength`, until an IAM owner sets the instance default (docs/api/policies.md)',
  },
  {
    key: 'authFailureLimit',
    env: 'AUTH_FAILURE_LIMIT',
    schema: { type: 'integer', minimum: 0, maximum: 1000000, default: 20 },
    description:
      'Failed authentications one client address may make within `AUTH_FAILURE_WINDOW` before its attempts are answered 429 (login page, token, introspection and revocation client authentication, JWT profile assertions, admin and management tokens); 0: no throttling',
  },
  {
    key: 'authFailureWindow',
    env: 'AUTH_FAILURE_WINDOW',
    schema: { ...duration, maximum: 86400, default: 60 },
    description: 'Sliding window of `AUTH_FAILURE_LIMIT`',
    duration: true,
  },
  {
    key: 'outboundAllowPrivate',
    env: 'OUTBOUND_ALLOW_PRIVATE',
    schema: { type: 'boolean', default: false },
    description:
      'Let every outbound call (back-channel logout) reach loopback and private addresses, for local development; link-local and cloud-metadata addresses stay refused',
  },
  {
    key: 'smtpUrl',
    env: 'SMTP_URL',
    schema: { type: 'string', minLength: 1, maxLength: 2000 },
    description:
      "SMTP server for mails: `smtp://user:pass@host:587` (STARTTLS required; `?tls=none` for a local server without TLS) or `smtps://user:pass@host:465`; the admin API's setting wins; unset: mails go to `DATA_DIR/outbox/`",
    secret: true,
  },
  {
    key: 'smtpFrom',
    env: 'SMTP_FROM',
    schema: { type: 'string', minLength: 3, maxLength: 300 },
    description: 'Sender of mails: `noreply@example.com` or `Example <noreply@example.com>`; default `noreply@{INSTANCE_DOMAIN}`',
  },
  {
    key: 'actionsRetryFor',
    env: 'ACTIONS_RETRY_FOR',
    schema: { ...duration, maximum: 30 * 86400, default: 86400 },
    description:
      'How long an event delivery to an action target is retried before the event is recorded as failed and skipped (docs/actions.md); keep at least the default `24h` in production, shorter only for tests',
    duration: true,
  },
  {
    key: 'actionsRetryDelay',
    env: 'ACTIONS_RETRY_DELAY',
    schema: { ...duration, maximum: 86400, default: 10 },
    description: 'Delay before the first retry of a failed event delivery; each next one doubles, up to `ACTIONS_RETRY_MAX_DELAY`',
    duration: true,
  },
  {
    key: 'actionsRetryMaxDelay',
    env: 'ACTIONS_RETRY_MAX_DELAY',
    schema: { ...duration, maximum: 86400, default: 3600 },
    description: 'Longest delay between two attempts at an event delivery',
    duration: true,
  },
  {
    key: 'shutdownTimeout',
    env: 'SHUTDOWN_TIMEOUT',
    schema: { ...duration, default: 10 },
    description: 'Seconds to finish in-flight requests on SIGTERM',
    duration: true,
  },
];
