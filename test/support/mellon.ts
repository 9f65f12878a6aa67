import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, sleep, tempDir } from './server.ts';

// A real SAML service provider for the tests: Apache httpd with Debian's
// mod_auth_mellon (packages apache2, libapache2-mod-auth-mellon), started
// by the test in the foreground on a private port, with its own
// ServerRoot, PidFile and configuration in a temporary folder. Its
// protected page /app/ is a CGI that prints the MELLON_* variables mellon
// sets from the assertion's attributes.

export const APACHE = '/usr/sbin/apache2';
const MODULES = '/usr/lib/apache2/modules';

/** Reason to skip on a machine without the packages; never under CI, which installs them. */
export const needsMellon =
  (existsSync(APACHE) && existsSync(join(MODULES, 'mod_auth_mellon.so'))) || process.env.CI === 'true'
    ? false
    : 'apache2 and libapache2-mod-auth-mellon are not installed';

export interface MellonSp {
  /** http://localhost:PORT */
  origin: string;
  entityId: string;
  /** The SP's metadata, as mellon_create_metadata wrote it. */
  metadataXml: string;
  /** The SP's signing key (PEM) and certificate (base64 DER), for requests the test writes itself. */
  keyPem: string;
  certificate: string;
  /** Starts Apache with the IdP's metadata. */
  start(idpMetadataXml: string): Promise<void>;
  errorLog(): string;
  stop(): Promise<void>;
}

const CGI = `#!/bin/sh
printf 'Content-Type: text/plain\\r\\n\\r\\n'
env | grep '^MELLON_' | sort
`;

function config(dir: string, port: number, files: { key: string; cert: string; metadata: string }): string {
  return `ServerRoot "${dir}"
ServerName localhost
Listen 127.0.0.1:${port}
PidFile "${dir}/httpd.pid"
DefaultRuntimeDir "${dir}"
ErrorLog "${dir}/error.log"
LogLevel warn auth_mellon:info
User nobody
Group nogroup
LoadModule mpm_prefork_module ${MODULES}/mod_mpm_prefork.so
LoadModule authn_core_module ${MODULES}/mod_authn_core.so
LoadModule authz_core_module ${MODULES}/mod_authz_core.so
LoadModule authz_user_module ${MODULES}/mod_authz_user.so
LoadModule alias_module ${MODULES}/mod_alias.so
LoadModule cgi_module ${MODULES}/mod_cgi.so
LoadModule setenvif_module ${MODULES}/mod_setenvif.so
LoadModule auth_mellon_module ${MODULES}/mod_auth_mellon.so
# mellon marks its cookies SameSite=None, which browsers drop without Secure
# (this SP is plain http); without the attribute they are Lax, and the IdP
# shares this SP's site (localhost), so they come back with the POSTed response.
SetEnvIf Request_URI "." MELLON_DISABLE_SAMESITE=1
StartServers 1
MinSpareServers 1
MaxSpareServers 2
MaxRequestWorkers 4
MellonCacheSize 10
MellonLockFile "${dir}/mellon.lock"
DocumentRoot "${dir}/htdocs"
ScriptAlias /app/ "${dir}/cgi/"
<Directory "${dir}">
  AllowOverride None
  Require all granted
</Directory>
<Location />
  MellonEnable info
  MellonEndpointPath /mellon
  # Two SPs of one test share the host localhost, and cookies ignore ports: each its own cookie.
  MellonVariable "sp${port}"
  MellonSPPrivateKeyFile "${files.key}"
  MellonSPCertFile "${files.cert}"
  MellonSPMetadataFile "${files.metadata}"
  MellonIdPMetadataFile "${dir}/idp.xml"
  MellonSecureCookie Off
</Location>
<Location /app/>
  AuthType Mellon
  MellonEnable auth
  Require valid-user
</Location>
`;
}

/** The SP's keys and metadata, for a port chosen now; Apache starts later with the IdP's metadata. */
export async function prepareMellon(): Promise<MellonSp> {
  const dir = tempDir('mellon-');
  // Apache's children run as nobody: they read this folder.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const entityId = `${origin}/mellon/metadata`;
  const created = spawnSync('mellon_create_metadata', [entityId, `${origin}/mellon`], { cwd: dir, encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`mellon_create_metadata failed: ${created.stderr}`);
  const base = readdirSync(dir)
    .find((file) => file.endsWith('.xml'))!
    .slice(0, -4);
  const files = { key: join(dir, `${base}.key`), cert: join(dir, `${base}.cert`), metadata: join(dir, `${base}.xml`) };
  for (const file of Object.values(files)) chmodSync(file, 0o644);
  // Modes set explicitly: the server under test narrows this process's umask (DATA_DIR is private).
  for (const sub of ['htdocs', 'cgi']) {
    mkdirSync(join(dir, sub));
    chmodSync(join(dir, sub), 0o755);
  }
  writeFileSync(join(dir, 'cgi', 'attributes'), CGI);
  chmodSync(join(dir, 'cgi', 'attributes'), 0o755);
  writeFileSync(join(dir, 'httpd.conf'), config(dir, port, files));
  const certPem = readFileSync(files.cert, 'utf8');
  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  const errorLog = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '');
  return {
    origin,
    entityId,
    metadataXml: readFileSync(files.metadata, 'utf8'),
    keyPem: readFileSync(files.key, 'utf8'),
    certificate: certPem.replace(/-----[A-Z ]+-----|\s+/g, ''),
    errorLog,
    async start(idpMetadataXml) {
      writeFileSync(join(dir, 'idp.xml'), idpMetadataXml);
      chmodSync(join(dir, 'idp.xml'), 0o644);
      // A process group of its own: prefork's shutdown signals its whole group, which would otherwise be the test runner's.
      const proc = spawn(APACHE, ['-d', dir, '-f', join(dir, 'httpd.conf'), '-DFOREGROUND'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      child = proc;
      let output = '';
      proc.stdout!.on('data', (chunk) => (output += chunk));
      proc.stderr!.on('data', (chunk) => (output += chunk));
      exited = new Promise((resolve) => proc.once('exit', resolve));
      for (let i = 0; i < 100; i += 1) {
        if (proc.exitCode !== null) throw new Error(`apache2 exited: ${output}\n${errorLog()}`);
        const up = await fetch(`${origin}/mellon/metadata`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) return;
        await sleep(100);
      }
      throw new Error(`apache2 did not answer: ${output}\n${errorLog()}`);
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
