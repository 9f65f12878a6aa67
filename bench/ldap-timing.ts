import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ldapSettingsOf } from '../src/domain/ldap.ts';
import { ldapDirectory } from '../src/outbound/ldap.ts';
import { ADMIN_DN, startSlapd, SUFFIX } from '../test/support/slapd.ts';

// How long an LDAP sign-in takes to refuse an unknown login name and a
// known name's wrong password (docs/decisions.md, "LDAP unknown names"):
// against a slapd of the tests' kind on loopback, the two alternating,
// the median of each. One entry's password is stored in the clear, one as
// {SSHA} (RFC 2307 style, as slappasswd makes it), so the answer shows what
// the directory's own hashing adds to a wrong password.
//
//   node bench/ldap-timing.ts [attempts per kind, default 300]

const attempts = Number(process.argv[2] ?? 300);

const ssha = (password: string) => {
  const salt = randomBytes(8);
  return `{SSHA}${Buffer.concat([createHash('sha1').update(password).update(salt).digest(), salt]).toString('base64')}`;
};

const slapd = await startSlapd([
  { uid: 'clear', password: 'Clear-Pass-1', givenName: 'Clear', sn: 'Text' },
  { uid: 'hashed', password: ssha('Hashed-Pass-1'), givenName: 'Hashed', sn: 'Salted' },
]);
await slapd.start();
try {
  const directory = ldapDirectory(true);
  const settings = ldapSettingsOf({
    servers: [slapd.ldapUrl],
    baseDn: SUFFIX,
    bindDn: ADMIN_DN,
    userBase: 'ou=people',
    userObjectClasses: ['inetOrgPerson'],
    userFilters: ['uid'],
    attributes: { idAttribute: 'uid' },
  });
  const cases: Record<string, string> = { 'unknown name': 'nobody', 'wrong password (clear)': 'clear', 'wrong password ({SSHA})': 'hashed' };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let i = 0; i < attempts + 20; i++) {
    for (const [name, uid] of Object.entries(cases)) {
      const start = performance.now();
      const answer = await directory.authenticate(settings, slapd.adminPassword, uid, 'not-the-password');
      const ms = performance.now() - start;
      if ('identity' in answer) throw new Error(`${name} signed in`);
      // The first rounds warm up the JIT and slapd's caches.
      if (i >= 20) samples[name]!.push(ms);
    }
  }
  for (const [name, values] of Object.entries(samples)) {
    values.sort((a, b) => a - b);
    const at = (q: number) => values[Math.floor(q * (values.length - 1))]!.toFixed(3);
    process.stdout.write(`${name.padEnd(26)} median ${at(0.5)} ms  (p25 ${at(0.25)}, p75 ${at(0.75)}; ${values.length} attempts)\n`);
  }
} finally {
  await slapd.close();
}
