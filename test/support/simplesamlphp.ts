import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { opensslKeyPair } from '../saml/support.ts';
import { freePort, sleep, tempDir } from './server.ts';

// A real SAML identity provider for the tests: Debian's SimpleSAMLphp
// (packages simplesamlphp, php-cli), served by PHP's built-in web server,
// started by the test on a private port with its own configuration folder
// (SIMPLESAMLPHP_CONFIG_DIR): an exampleauth:UserPass login with fixed
// users, its own key and certificate (openssl), and our SP's metadata as
// its saml20-sp-remote entry.

const WWW = '/usr/share/simplesamlphp/www';

/** Reason to skip on a machine without the packages; never under CI, which installs them. */
export const needsSimpleSamlPhp =
  (existsSync(WWW) && existsSync('/usr/bin/php')) || process.env.CI === 'true' ? false : 'simplesamlphp and php-cli are not installed';

export interface SamlIdpUser {
  userName: string;
  password: string;
  /** Attribute name → values, as the IdP sends them. */
  attributes: Record<string, string[]>;
}

export interface OurSp {
  entityId: string;
  acs: string;
  /** Base64 DER. */
  certificate: string;
  /** The SP's signed AuthnRequests are checked against its certificate. */
  signsRequests: boolean;
  /** The NameID format its metadata names (SimpleSAMLphp answers that one); persistent when left out. */
  nameIdFormat?: string;
  /** SimpleSAMLphp encrypts its assertions to the certificate (1.19: AES-128-CBC, the key wrapped with RSA-OAEP MGF1-SHA1). */
  encryptsAssertions?: boolean;
}

export interface SimpleSamlPhp {
  /** http://localhost:PORT */
  origin: string;
  entityId: string;
  metadataUrl: string;
  /** Base64 DER of the IdP's signing certificate; its key PEM, for responses a test forges as if from the IdP. */
  certificate: string;
  keyPem: string;
  /** Starts PHP's server with our SP's metadata. */
  start(sp: OurSp): Promise<void>;
  /** Our SP's metadata changed: SimpleSAMLphp reads its metadata files at each request. */
  trust(sp: OurSp): void;
  log(): string;
  stop(): Promise<void>;
}

const php = (value: unknown): string => JSON.stringify(value).replace(/\\\//g, '/');

/** A PHP array literal of a JSON-able value (strings, arrays, objects, booleans). */
function phpValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(phpValue).join(', ')}]`;
  if (value && typeof value === 'object')
    return `[${Object.entries(value)
      .map(([k, v]) => `${php(k).replace(/\$/g, '\\$')} => ${phpValue(v)}`)
      .join(', ')}]`;
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : String(value);
}

export async function prepareSimpleSamlPhp(users: SamlIdpUser[]): Promise<SimpleSamlPhp> {
  const dir = tempDir('simplesamlphp-');
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const entityId = `${origin}/saml2/idp/metadata.php`;
  const { keyPem, certificate } = opensslKeyPair('simplesamlphp');
  for (const sub of ['config', 'metadata', 'cert', 'log', 'data', 'tmp']) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, 'cert', 'idp.pem'), keyPem);
  writeFileSync(join(dir, 'cert', 'idp.crt'), `-----BEGIN CERTIFICATE-----\n${certificate.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`);
  const config = {
    baseurlpath: `${origin}/`,
    certdir: `${dir}/cert/`,
    loggingdir: `${dir}/log/`,
    datadir: `${dir}/data/`,
    tempdir: `${dir}/tmp/`,
    metadatadir: `${dir}/metadata/`,
    secretsalt: 'test-salt-of-this-run-only',
    'auth.adminpassword': 'not-used-by-the-test',
    technicalcontact_email: 'test@example.test',
    timezone: 'UTC',
    'logging.level': 6,
    'logging.handler': 'file',
    'logging.logfile': 'simplesamlphp.log',
    'enable.saml20-idp': true,
    'store.type': 'phpsession',
    'session.cookie.secure': false,
    'session.phpsession.savepath': `${dir}/tmp`,
    'module.enable': { exampleauth: true, core: true, saml: true, admin: false },
  };
  writeFileSync(join(dir, 'config', 'config.php'), `<?php\n$config = ${phpValue(config)};\n`);
  const source: Record<string, unknown> = { 0: 'exampleauth:UserPass' };
  for (const user of users) source[`${user.userName}:${user.password}`] = user.attributes;
  writeFileSync(join(dir, 'config', 'authsources.php'), `<?php\n$config = ${phpValue({ users: source })};\n`);
  writeFileSync(
    join(dir, 'metadata', 'saml20-idp-hosted.php'),
    `<?php\n$metadata[${phpValue(entityId)}] = ${phpValue({
      host: '__DEFAULT__',
      privatekey: 'idp.pem',
      certificate: 'idp.crt',
      auth: 'users',
      'signature.algorithm': 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      SingleSignOnServiceBinding: ['urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'],
    })};\n`,
  );
  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  const trust = (sp: OurSp) =>
    writeFileSync(
      join(dir, 'metadata', 'saml20-sp-remote.php'),
      `<?php\n$metadata[${phpValue(sp.entityId)}] = ${phpValue({
        AssertionConsumerService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: sp.acs }],
        certData: sp.certificate,
        'validate.authnrequest': sp.signsRequests,
        NameIDFormat: sp.nameIdFormat ?? 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
        'simplesaml.nameidattribute': 'UserName',
        'sign.assertion': true,
        'assertion.encryption': sp.encryptsAssertions === true,
      })};\n`,
    );
  const log = () => (existsSync(join(dir, 'log', 'simplesamlphp.log')) ? readFileSync(join(dir, 'log', 'simplesamlphp.log'), 'utf8') : '');
  return {
    origin,
    entityId,
    metadataUrl: entityId,
    certificate,
    keyPem,
    log,
    trust,
    async start(sp) {
      trust(sp);
      // The tests rewrite the SP's metadata file while php runs: OPcache must look at it every time
      // (Debian's default checks a file at most every 2 s, and would serve the one before).
      const proc = spawn('php', ['-d', 'opcache.revalidate_freq=0', '-S', `localhost:${port}`, '-t', WWW], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SIMPLESAMLPHP_CONFIG_DIR: join(dir, 'config') },
      });
      child = proc;
      let output = '';
      proc.stdout!.on('data', (chunk) => (output += chunk));
      proc.stderr!.on('data', (chunk) => (output = (output + chunk).slice(-4000)));
      exited = new Promise((resolve) => proc.once('exit', resolve));
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        if (proc.exitCode !== null) throw new Error(`php exited: ${output}`);
        const up = await fetch(entityId).then(
          (r) => r.ok,
          () => false,
        );
        if (up) return;
        await sleep(100);
      }
      throw new Error(`SimpleSAMLphp did not answer: ${output}\n${log()}`);
    },
    async stop() {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
