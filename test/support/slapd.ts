import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { freePort, sleep, tempDir } from './server.ts';

// A real LDAP directory for the tests: OpenLDAP's slapd (Debian package
// slapd; openssl makes its certificate), started by the test in the
// foreground on private ports, with its own slapd.conf, database and TLS
// certificate in a temporary folder; seeded with slapadd before it starts. The system's
// slapd, if any, is never touched.

export const SLAPD = '/usr/sbin/slapd';

/** Reason to skip on a machine without the packages; never under CI, which installs them. */
export const needsSlapd = existsSync(SLAPD) || process.env.CI === 'true' ? false : 'slapd is not installed';

export const SUFFIX = 'dc=example,dc=test';
export const PEOPLE = `ou=people,${SUFFIX}`;
export const ADMIN_DN = `cn=admin,${SUFFIX}`;

export interface LdapPerson {
  uid: string;
  password: string;
  givenName: string;
  sn: string;
  mail?: string;
  displayName?: string;
  telephoneNumber?: string;
}

export interface Slapd {
  /** ldap://127.0.0.1:PORT (StartTLS offered) and ldaps://127.0.0.1:PORT */
  ldapUrl: string;
  ldapsUrl: string;
  adminPassword: string;
  /** The self-signed certificate (PEM) the server presents, for 127.0.0.1 and localhost. */
  certificatePem: string;
  /** slapd's statistics log (connections, operations, results: loglevel stats) since it was started. */
  log(): string;
  /** Waits until the log says what `seen` looks for (slapd writes a line as it handles the operation, not before it answers). */
  waitForLog(seen: (log: string) => boolean): Promise<string>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

/** An LDIF value: base64 (RFC 2849 `::`) when it is not a SAFE-STRING. */
function ldifLine(name: string, value: string): string {
  return /^[\x21-\x39\x3b\x3d-\x7e][\x20-\x7e]*$/.test(value) && !value.endsWith(' ')
    ? `${name}: ${value}`
    : `${name}:: ${Buffer.from(value, 'utf8').toString('base64')}`;
}

function seedLdif(people: LdapPerson[]): string {
  const entries = [
    [`dn: ${SUFFIX}`, 'objectClass: dcObject', 'objectClass: organization', 'o: Example', 'dc: example'],
    [`dn: ${PEOPLE}`, 'objectClass: organizationalUnit', 'ou: people'],
    ...people.map((p) => [
      ldifLine('dn', `uid=${p.uid.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)},${PEOPLE}`),
      'objectClass: inetOrgPerson',
      ldifLine('uid', p.uid),
      ldifLine('cn', `${p.givenName} ${p.sn}`),
      ldifLine('sn', p.sn),
      ldifLine('givenName', p.givenName),
      ...(p.mail ? [ldifLine('mail', p.mail)] : []),
      ...(p.displayName ? [ldifLine('displayName', p.displayName)] : []),
      ...(p.telephoneNumber ? [ldifLine('telephoneNumber', p.telephoneNumber)] : []),
      ldifLine('userPassword', p.password),
    ]),
  ];
  return `${entries.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

/**
 * A self-signed P-256 certificate for 127.0.0.1 and localhost, written as
 * cert.pem and key.pem into `dir`: slapd's own, or another that is not
 * slapd's (a wrong CA).
 */
export function selfSignedCertificate(dir: string, commonName: string): { certificatePem: string; keyPem: string } {
  const cert = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { encoding: 'utf8' },
  );
  if (cert.status !== 0) throw new Error(`openssl: ${cert.stderr}`);
  return { certificatePem: readFileSync(join(dir, 'cert.pem'), 'utf8'), keyPem: readFileSync(join(dir, 'key.pem'), 'utf8') };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startSlapd(people: LdapPerson[]): Promise<Slapd> {
  const dir = tempDir('portcullis-slapd-');
  const data = join(dir, 'data');
  mkdirSync(data);
  const [port, tlsPort] = [await freePort(), await freePort()];
  const adminPassword = 'Directory-Admin-1';
  selfSignedCertificate(dir, 'localhost');
  writeFileSync(
    join(dir, 'slapd.conf'),
    `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile ${dir}/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
TLSCertificateFile ${dir}/cert.pem
TLSCertificateKeyFile ${dir}/key.pem
database mdb
maxsize 10485760
suffix "${SUFFIX}"
rootdn "${ADMIN_DN}"
rootpw ${adminPassword}
directory ${data}
`,
  );
  writeFileSync(join(dir, 'seed.ldif'), seedLdif(people));
  const seeded = spawnSync('/usr/sbin/slapadd', ['-f', join(dir, 'slapd.conf'), '-l', join(dir, 'seed.ldif')], { encoding: 'utf8' });
  if (seeded.status !== 0) throw new Error(`slapadd: ${seeded.stderr}`);

  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  let output = '';
  const slapd: Slapd = {
    ldapUrl: `ldap://127.0.0.1:${port}`,
    ldapsUrl: `ldaps://127.0.0.1:${tlsPort}`,
    adminPassword,
    certificatePem: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    log: () => output,
    async waitForLog(seen) {
      const deadline = Date.now() + 10_000;
      while (!seen(output)) {
        if (Date.now() > deadline) throw new Error(`slapd never logged it; its log:\n${output.slice(-4000)}`);
        await sleep(20);
      }
      return output;
    },
    async start() {
      // -d keeps slapd in the foreground, so it ends with the test; 256 is loglevel stats, one line per operation and result.
      const proc = spawn(SLAPD, ['-f', join(dir, 'slapd.conf'), '-h', `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${tlsPort}/`, '-d', '256'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child = proc;
      output = '';
      proc.stderr?.on('data', (chunk) => {
        output += String(chunk);
      });
      exited = new Promise((resolve) => proc.once('exit', resolve));
      const deadline = Date.now() + 10_000;
      while (!(await portOpen(port)) || !(await portOpen(tlsPort))) {
        if (proc.exitCode !== null) throw new Error(`slapd exited: ${output}`);
        if (Date.now() > deadline) throw new Error(`slapd did not listen: ${output}`);
        await sleep(50);
      }
    },
    async stop() {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      child = undefined;
    },
    async close() {
      await slapd.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return slapd;
}

export interface Relay {
  /** ldap://127.0.0.1:PORT */
  url: string;
  /** While true, new connections are accepted and never answered: a directory that hangs. */
  silent: boolean;
  close(): Promise<void>;
}

/** A TCP relay in front of a directory, to play a slow one on demand. */
export async function startRelay(targetUrl: string): Promise<Relay> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (relay.silent) return;
    const upstream = connect({ host: target.hostname, port: Number(target.port) });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const relay: Relay = {
    url: `ldap://127.0.0.1:${port}`,
    silent: false,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return relay;
}
