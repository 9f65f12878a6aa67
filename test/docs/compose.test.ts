import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { settings } from '../../config/settings.ts';
import { loadConfig } from '../../config/load.ts';
import { ROOT } from '../support/server.ts';

// compose.yaml (README "Run with Docker") cannot be run here — no Docker on
// the machine that tests it — so its structure is checked instead: the
// services, their health checks and start order, the volumes, and the
// server's environment against the settings the README documents.

const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'));
const services = compose.services as Record<string, any>;
const portcullis = services.portcullis;
const environment = portcullis.environment as Record<string, string>;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** A compose value as the shell would see it with nothing set: `${NAME:-default}` → default. */
const interpolated = (value: string) => String(value).replace(/\$\{\w+:-([^}]*)\}/g, '$1');

describe('compose.yaml', () => {
  it('runs Portcullis built from this folder with PostgreSQL and Redis', () => {
    assert.deepEqual(Object.keys(services).sort(), ['portcullis', 'postgres', 'redis']);
    assert.equal(portcullis.build, '.');
    assert.match(services.postgres.image, /^postgres:\d+/);
    assert.match(services.redis.image, /^redis:\d+/);
  });

  it('every environment name is a documented setting, and the values are valid settings', () => {
    const known = new Set(settings.map((s) => s.env));
    for (const name of Object.keys(environment)) {
      assert.ok(known.has(name), `${name} is not a setting`);
      assert.match(README, new RegExp(`\\| \`${name}\` \\|`), `${name} is in the README's configuration table`);
    }
    const config = loadConfig(Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, interpolated(value)])));
    assert.equal(config.issuer, 'http://localhost:8080');
    assert.equal(config.databaseUrl, environment.DATABASE_URL);
  });

  it("DATABASE_URL and REDIS_URL name the services and PostgreSQL's own user, password and database", () => {
    const db = new URL(environment.DATABASE_URL!);
    const pg = services.postgres.environment;
    assert.equal(db.hostname, 'postgres');
    assert.equal(db.port, '5432');
    assert.equal(db.username, pg.POSTGRES_USER);
    assert.equal(db.password, pg.POSTGRES_PASSWORD);
    assert.equal(db.pathname, `/${pg.POSTGRES_DB}`);
    assert.equal(new URL(environment.REDIS_URL!).hostname, 'redis');
  });

  it('publishes the port the server listens on and the ISSUER names', () => {
    const [host, container] = String(portcullis.ports[0]).split(':');
    assert.equal(container, String(loadConfig({}).port), 'the image listens on the default PORT');
    assert.equal(new URL(environment.ISSUER!).port, host);
  });

  it('starts the server once both stores are healthy', () => {
    for (const store of ['postgres', 'redis']) {
      assert.equal(portcullis.depends_on[store].condition, 'service_healthy');
      assert.ok(Array.isArray(services[store].healthcheck.test) && services[store].healthcheck.test.length > 1, `${store} has a health check`);
    }
  });

  it('keeps /data (admin credentials, master key) and the stores in named volumes', () => {
    const declared = Object.keys(compose.volumes);
    const mounts = (service: string) => (services[service].volumes as string[]).map((v) => v.split(':'));
    assert.deepEqual(mounts('portcullis'), [['portcullis-data', '/data']]);
    assert.deepEqual(mounts('postgres'), [['postgres-data', '/var/lib/postgresql/data']]);
    assert.deepEqual(mounts('redis'), [['redis-data', '/data']]);
    for (const [volume] of [...mounts('portcullis'), ...mounts('postgres'), ...mounts('redis')]) assert.ok(declared.includes(volume!), volume);
  });

  it('the README tells how to read the admin password from the volume, and that the file was not run here', () => {
    const start = README.indexOf('## Run with Docker');
    assert.ok(start > 0, 'README has "## Run with Docker"');
    const end = README.indexOf('\n## ', start + 3);
    const text = README.slice(start, end === -1 ? undefined : end).replace(/\s+/g, ' ');
    assert.match(text, /docker compose up/);
    assert.match(text, /docker compose exec portcullis cat \/data\/admin\.password/);
    assert.match(text, /was not run where it was written/);
  });
});
