import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, decodeMasterKey, loadConfig } from '../../config/load.ts';
import { settings } from '../../config/settings.ts';

/** Asserts that `env` is refused with a ConfigError whose message names `setting`; returns the message. */
function refused(env: Record<string, string>, setting: string): string {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught, `expected ${JSON.stringify(env)} to be refused`);
  assert.ok(caught instanceof ConfigError, `expected a ConfigError, got ${(caught as Error).name}: ${(caught as Error).message}`);
  assert.match(caught.message, new RegExp(`\\b${setting}\\b`), `message should name ${setting}: ${caught.message}`);
  assert.ok(!caught.message.includes('\n'), 'the message is one line');
  return caught.message;
}

describe('configuration defaults', () => {
  it('serves a local trial with no settings at all: PORT 8080, HOST 0.0.0.0, ISSUER http://localhost:8080, DATA_DIR ./data', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.issuer, 'http://localhost:8080');
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.masterKey, undefined);
    assert.equal(config.trustProxy, false);
    assert.equal(config.jwksMaxAge, 300);
  });

  it('uses the default lifetimes of the README: access and ID token 12h, code 10 min, refresh 30 d idle / 90 d absolute, session 24h', () => {
    const config = loadConfig({});
    assert.equal(config.accessTokenLifetime, 12 * 3600);
    assert.equal(config.idTokenLifetime, 12 * 3600);
    assert.equal(config.authorizationCodeLifetime, 600);
    assert.equal(config.refreshTokenIdleLifetime, 30 * 86400);
    assert.equal(config.refreshTokenAbsoluteLifetime, 90 * 86400);
    assert.equal(config.sessionIdleLifetime, 86400);
  });

  it('derives the default ISSUER from PORT', () => {
    assert.equal(loadConfig({ PORT: '9090' }).issuer, 'http://localhost:9090');
  });

  it('treats an empty variable as unset', () => {
    const config = loadConfig({
      PORT: '',
      HOST: '',
      ISSUER: '',
      DATA_DIR: '',
      DATABASE_URL: '',
      REDIS_URL: '',
      MASTER_KEY: '',
      LOG_LEVEL: '',
      TRUST_PROXY: '',
      ACCESS_TOKEN_LIFETIME: '',
      CONFIG_FILE: '',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.issuer, 'http://localhost:8080');
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.masterKey, undefined);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.trustProxy, false);
    assert.equal(config.accessTokenLifetime, 43200);
  });

  it('reads every setting from its environment variable', () => {
    const config = loadConfig({
      PORT: '9443',
      HOST: '127.0.0.1',
      ISSUER: 'https://id.example.com',
      DATA_DIR: '/var/lib/portcullis',
      DATABASE_URL: 'postgres://u:p@db.internal:5432/iam',
      DATABASE_SCHEMA: 'iam',
      REDIS_URL: 'rediss://cache.internal:6380/2',
      REDIS_PREFIX: 'iam:',
      TRUST_PROXY: 'true',
      LOG_LEVEL: 'warn',
    });
    assert.equal(config.port, 9443);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.issuer, 'https://id.example.com');
    assert.equal(config.dataDir, '/var/lib/portcullis');
    assert.equal(config.databaseUrl, 'postgres://u:p@db.internal:5432/iam');
    assert.equal(config.databaseSchema, 'iam');
    assert.equal(config.redisUrl, 'rediss://cache.internal:6380/2');
    assert.equal(config.redisPrefix, 'iam:');
    assert.equal(config.trustProxy, true);
    assert.equal(config.logLevel, 'warn');
  });

  it('normalises an ISSUER with a trailing slash to its bare origin', () => {
    assert.equal(loadConfig({ ISSUER: 'https://id.example.com/' }).issuer, 'https://id.example.com');
  });

  it('documents every setting with a description and a unique environment variable', () => {
    const envs = settings.map((s) => s.env);
    assert.equal(new Set(envs).size, envs.length);
    for (const s of settings) assert.ok(s.description.length > 0, `${s.env} has a description`);
  });
});

describe('durations', () => {
  it('parses 12h, 30d, 15m, 90s and a bare 90 to seconds', () => {
    assert.equal(loadConfig({ ACCESS_TOKEN_LIFETIME: '12h' }).accessTokenLifetime, 43200);
    assert.equal(loadConfig({ REFRESH_TOKEN_IDLE_LIFETIME: '30d' }).refreshTokenIdleLifetime, 2592000);
    assert.equal(loadConfig({ AUTHORIZATION_CODE_LIFETIME: '15m' }).authorizationCodeLifetime, 900);
    assert.equal(loadConfig({ ID_TOKEN_LIFETIME: '90s' }).idTokenLifetime, 90);
    assert.equal(loadConfig({ JWKS_MAX_AGE: '90' }).jwksMaxAge, 90);
  });

  it('refuses ACCESS_TOKEN_LIFETIME=5 weeks, naming the setting', () => {
    refused({ ACCESS_TOKEN_LIFETIME: '5 weeks' }, 'ACCESS_TOKEN_LIFETIME');
  });

  it('refuses a zero duration and a fractional one', () => {
    refused({ SHUTDOWN_TIMEOUT: '0' }, 'SHUTDOWN_TIMEOUT');
    refused({ ID_TOKEN_LIFETIME: '1.5h' }, 'ID_TOKEN_LIFETIME');
  });
});

describe('invalid settings stop with a message naming the setting', () => {
  it('refuses PORT=abc', () => {
    refused({ PORT: 'abc' }, 'PORT');
  });

  it('refuses PORT=70000', () => {
    refused({ PORT: '70000' }, 'PORT');
  });

  it('refuses PORT=0', () => {
    refused({ PORT: '0' }, 'PORT');
  });

  it('refuses ISSUER=not-a-url', () => {
    refused({ ISSUER: 'not-a-url' }, 'ISSUER');
  });

  it('refuses an ISSUER with a path, a query or a fragment', () => {
    refused({ ISSUER: 'https://id.example.com/auth' }, 'ISSUER');
    refused({ ISSUER: 'https://id.example.com?tenant=1' }, 'ISSUER');
    refused({ ISSUER: 'https://id.example.com/?' }, 'ISSUER');
    refused({ ISSUER: 'https://id.example.com#top' }, 'ISSUER');
  });

  it('refuses an ISSUER that is not http or https', () => {
    refused({ ISSUER: 'ftp://id.example.com' }, 'ISSUER');
  });

  it('refuses an ISSUER without a host or with an impossible port as a ConfigError, not a crash', () => {
    refused({ ISSUER: 'http://' }, 'ISSUER');
    refused({ ISSUER: 'https://id.example.com:99999' }, 'ISSUER');
  });

  it('refuses DATABASE_URL=mysql://x', () => {
    refused({ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL');
  });

  it('refuses a malformed DATABASE_URL (postgres:// with no host)', () => {
    refused({ DATABASE_URL: 'postgres://' }, 'DATABASE_URL');
  });

  it('never shows the DATABASE_URL password in the error of an invalid DATABASE_URL', () => {
    for (const url of [
      'postgres://admin:S3cretPw@/iam',
      'mysql://admin:S3cretPw@db/iam',
      'postgres://admin:S3cretPw@db:99999/iam',
      'postgresql://admin:S3cretPw@[::1/iam',
    ]) {
      const message = refused({ DATABASE_URL: url }, 'DATABASE_URL');
      assert.ok(!message.includes('S3cretPw'), `password leaked in: ${message}`);
    }
  });

  it('refuses REDIS_URL=http://x, without showing a Redis password', () => {
    refused({ REDIS_URL: 'http://x' }, 'REDIS_URL');
    for (const url of ['http://:S3cretPw@cache', 'redis://:S3cretPw@']) {
      const message = refused({ REDIS_URL: url }, 'REDIS_URL');
      assert.ok(!message.includes('S3cretPw'), `password leaked in: ${message}`);
    }
  });

  it('refuses a MASTER_KEY of 31 bytes in hex, without echoing it', () => {
    const key = 'ab'.repeat(31);
    const message = refused({ MASTER_KEY: key }, 'MASTER_KEY');
    assert.ok(!message.includes(key));
  });

  it('refuses a garbage MASTER_KEY and a base64 one of the wrong length', () => {
    refused({ MASTER_KEY: 'not a key!!' }, 'MASTER_KEY');
    refused({ MASTER_KEY: Buffer.alloc(16, 7).toString('base64') }, 'MASTER_KEY');
  });

  it('accepts MASTER_KEY as 64 hex characters', () => {
    const bytes = Buffer.from([...Array(32).keys()]);
    const config = loadConfig({ MASTER_KEY: bytes.toString('hex') });
    assert.deepEqual(config.masterKey, bytes);
  });

  it('accepts MASTER_KEY as base64 (standard and url-safe) of 32 bytes', () => {
    const bytes = Buffer.alloc(32, 0xfb); // encodes to '+' and '/' in standard base64
    assert.deepEqual(loadConfig({ MASTER_KEY: bytes.toString('base64') }).masterKey, bytes);
    assert.deepEqual(loadConfig({ MASTER_KEY: bytes.toString('base64url') }).masterKey, bytes);
    assert.deepEqual(decodeMasterKey(`${bytes.toString('hex')}\n`), bytes);
  });

  it('refuses LOG_LEVEL=loud', () => {
    refused({ LOG_LEVEL: 'loud' }, 'LOG_LEVEL');
  });

  it('refuses TRUST_PROXY=maybe and accepts true / false', () => {
    refused({ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY');
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
  });

  it('refuses OUTBOUND_ALLOW_PRIVATE and ENABLE_HTTP_POST_METHODS other than true / false; both default to false', () => {
    refused({ OUTBOUND_ALLOW_PRIVATE: 'maybe' }, 'OUTBOUND_ALLOW_PRIVATE');
    refused({ ENABLE_HTTP_POST_METHODS: 'yes please' }, 'ENABLE_HTTP_POST_METHODS');
    assert.equal(loadConfig({}).outboundAllowPrivate, false);
    assert.equal(loadConfig({}).enableHttpPostMethods, false);
    assert.equal(loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'true' }).outboundAllowPrivate, true);
  });

  it('refuses a DATABASE_SCHEMA that is not a plain identifier', () => {
    refused({ DATABASE_SCHEMA: 'x"; DROP SCHEMA public; --' }, 'DATABASE_SCHEMA');
  });
});

describe('configuration file', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-config-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function file(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  it('reads a YAML CONFIG_FILE with camelCase keys', () => {
    const path = file('portcullis.yaml', 'port: 9000\nlogLevel: debug\naccessTokenLifetime: 2h\ntrustProxy: true\ndatabaseSchema: iam\n');
    const config = loadConfig({ CONFIG_FILE: path });
    assert.equal(config.port, 9000);
    assert.equal(config.issuer, 'http://localhost:9000');
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.accessTokenLifetime, 7200);
    assert.equal(config.trustProxy, true);
    assert.equal(config.databaseSchema, 'iam');
  });

  it('lets the environment win over the file', () => {
    const path = file('override.yaml', 'port: 9000\nlogLevel: debug\n');
    const config = loadConfig({ CONFIG_FILE: path, PORT: '9100' });
    assert.equal(config.port, 9100);
    assert.equal(config.issuer, 'http://localhost:9100');
    assert.equal(config.logLevel, 'debug');
  });

  it('lets an empty variable fall back to the file', () => {
    const path = file('empty-env.yaml', 'port: 9000\n');
    assert.equal(loadConfig({ CONFIG_FILE: path, PORT: '' }).port, 9000);
  });

  it('reads a JSON CONFIG_FILE', () => {
    const path = file('portcullis.json', JSON.stringify({ port: 9001, issuer: 'https://id.example.com', jwksMaxAge: '5m' }));
    const config = loadConfig({ CONFIG_FILE: path });
    assert.equal(config.port, 9001);
    assert.equal(config.issuer, 'https://id.example.com');
    assert.equal(config.jwksMaxAge, 300);
  });

  it('refuses an unknown key in the file, naming it', () => {
    const path = file('unknown.yaml', 'port: 9000\nlistenPort: 9001\n');
    const message = refused({ CONFIG_FILE: path }, 'CONFIG_FILE');
    assert.match(message, /listenPort/);
  });

  it('refuses environment-style keys in the file (keys are camelCase)', () => {
    const path = file('env-style.yaml', 'PORT: 9000\n');
    assert.match(refused({ CONFIG_FILE: path }, 'CONFIG_FILE'), /PORT/);
  });

  it('names the setting of a bad value found in the file', () => {
    const path = file('bad-value.yaml', 'port: abc\n');
    refused({ CONFIG_FILE: path }, 'PORT');
  });

  it('refuses a file that is not valid YAML or JSON, or not an object', () => {
    refused({ CONFIG_FILE: file('broken.json', '{"port": ') }, 'CONFIG_FILE');
    refused({ CONFIG_FILE: file('broken.yaml', 'port: [9000\n') }, 'CONFIG_FILE');
    refused({ CONFIG_FILE: file('list.yaml', '- port\n- 9000\n') }, 'CONFIG_FILE');
  });

  it('WEBAUTHN_RP_ID: the ISSUER host by default, or a parent domain of it; another domain is refused', () => {
    assert.equal(loadConfig({ ISSUER: 'https://id.example.com' }).webauthnRpId, 'id.example.com');
    assert.equal(loadConfig({ ISSUER: 'https://id.example.com', WEBAUTHN_RP_ID: 'example.com' }).webauthnRpId, 'example.com');
    refused({ ISSUER: 'https://id.example.com', WEBAUTHN_RP_ID: 'other.example' }, 'WEBAUTHN_RP_ID');
    refused({ ISSUER: 'https://id.example.com', WEBAUTHN_RP_ID: 'ample.com' }, 'WEBAUTHN_RP_ID');
    refused({ ISSUER: 'https://id.example.com', WEBAUTHN_RP_ID: 'not a host' }, 'WEBAUTHN_RP_ID');
  });

  it('refuses an unreadable CONFIG_FILE path', () => {
    refused({ CONFIG_FILE: join(dir, 'does-not-exist.yaml') }, 'CONFIG_FILE');
    refused({ CONFIG_FILE: dir }, 'CONFIG_FILE');
  });
});
