import { randomBytes } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { Client, InvalidCredentialsError, ResultCodeError, SizeLimitExceededError, type Entry } from 'ldapts';
import { type LdapAttributes, type LdapSettings, searchBaseOf, userSearchFilter } from '../domain/ldap.ts';
import { addressRefusal, privateAllowedFor } from './address-policy.ts';
import { checkedLookup } from './checked-agent.ts';
import { OutboundRefused } from './errors.ts';
import { type ExternalIdentity, UpstreamError } from './upstream.ts';

/**
 * The login's side of an LDAP provider (docs/idps.md, LDAP), on ldapts:
 * bind as the service account, search the user the typed name names, bind
 * as that entry with the typed password. Sockets connect like the outbound
 * HTTP client's (./client.ts): the host's addresses checked after
 * resolution and the socket connected to a checked one.
 */

/**
 * A sign-in's answer: the identity of the entry the login name names, when
 * the password binds as it; else refused, with that entry's id when the
 * name named one and its password was wrong (for the linked user's lockout).
 */
export type LdapSignIn = { identity: ExternalIdentity } | { refused: true; entryId?: string };

export interface LdapDirectory {
  /** Binds as `bindDn`: the provider's servers answer and take its password (a create or change is checked with it). */
  check(settings: LdapSettings, bindPassword: string): Promise<void>;
  authenticate(settings: LdapSettings, bindPassword: string, loginName: string, password: string): Promise<LdapSignIn>;
}

const bare = (host: string) => host.replace(/^\[(.*)\]$/, '$1');

/**
 * ldapts's socket factories: host names through the checked lookup (address
 * literals are checked before, in exchange); TLS, ldaps:// and StartTLS
 * alike, trusts the provider's `rootCa` alone when it has one (Node's `ca`
 * replaces its default CAs), and checks the server's name either way.
 */
function connectors(privateAllowed: boolean, rootCa: string | undefined) {
  const lookup = checkedLookup(privateAllowed);
  const trust = rootCa ? { ca: rootCa } : {};
  const createConnection = ((port: number, host: string) => net.connect({ port, host: bare(host), lookup })) as unknown as typeof net.connect;
  const createSecureConnection = ((portOrUpgrade: number | tls.ConnectionOptions, host?: string, options?: tls.ConnectionOptions) => {
    // StartTLS wraps the socket opened (and checked) above.
    if (typeof portOrUpgrade === 'object') return tls.connect({ ...portOrUpgrade, ...trust });
    const address = bare(host ?? '');
    return tls.connect({ ...options, ...trust, port: portOrUpgrade, host: address, lookup, ...(net.isIP(address) ? {} : { servername: address }) });
  }) as unknown as typeof tls.connect;
  return { createConnection, createSecureConnection };
}

/** The service account's bind was refused: the provider's bindDn or bindPassword is wrong. */
export class BindRefused extends UpstreamError {
  constructor() {
    super('invalid', 'the bind as bindDn was refused (wrong bindDn or bindPassword)');
  }
}

/** What ldapts threw, in the login's words; never a password (ldapts's messages carry the server's diagnostics, not the request). */
function upstreamErrorOf(err: unknown, host: string): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof OutboundRefused) return new UpstreamError('unreachable', err.message);
  if (err instanceof ResultCodeError) return new UpstreamError('invalid', `${host} answered ${err.name} (LDAP result ${err.code})`);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /CERT|TLS|SSL|ALTNAME|VERIFY|ISSUER|SIGNATURE/.test(code))
    return new UpstreamError('invalid', `${host}: TLS failed (${code})`);
  const why = typeof code === 'string' ? code : err instanceof Error ? err.message.split('\n')[0] : 'no answer';
  return new UpstreamError('unreachable', `${host} could not be reached (${why})`);
}

/** The value of an attribute (names compare case-insensitively, RFC 4512 2.5); `dn` is the entry's own name. */
function attributeValue(entry: Entry, attribute: string | undefined): string | undefined {
  if (!attribute) return undefined;
  if (attribute.toLowerCase() === 'dn') return entry.dn;
  const key = Object.keys(entry).find((name) => name.toLowerCase() === attribute.toLowerCase());
  const value = key === undefined ? undefined : entry[key];
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return undefined;
  return Buffer.isBuffer(first) ? first.toString('utf8') : first;
}

/** The profile an entry gives, by the provider's `attributes`; the typed name stands in for a preferred username none gives. */
export function identityOf(entry: Entry, attributes: LdapAttributes, loginName: string): ExternalIdentity {
  const id = attributeValue(entry, attributes.idAttribute);
  if (!id) throw new UpstreamError('invalid', `the entry has no ${attributes.idAttribute} (idAttribute)`);
  const optional = (field: keyof LdapAttributes) => attributeValue(entry, attributes[field]) || undefined;
  return {
    id,
    preferredUsername: optional('preferredUsernameAttribute') ?? loginName,
    email: optional('emailAttribute'),
    // RFC 4517 3.3.3: a Boolean is TRUE or FALSE.
    emailVerified: optional('emailVerifiedAttribute')?.toUpperCase() === 'TRUE',
    givenName: optional('firstNameAttribute'),
    familyName: optional('lastNameAttribute'),
    displayName: optional('displayNameAttribute'),
    locale: optional('preferredLanguageAttribute'),
    phone: optional('phoneAttribute'),
    amr: ['pwd'],
  };
}

/** One exchange with one server, the whole of it (connection, TLS, binds, search) within the provider's timeout. */
async function exchange<T>(server: string, settings: LdapSettings, privateAllowed: boolean, work: (client: Client) => Promise<T>): Promise<T> {
  const host = bare(new URL(server).hostname);
  // A socket connects to an address literal without a lookup: it is checked here.
  const refusal = net.isIP(host) ? addressRefusal(host, privateAllowed) : undefined;
  if (refusal) throw new OutboundRefused(host, refusal);
  const client = new Client({ url: server, timeout: settings.timeoutMs, connectTimeout: settings.timeoutMs, ...connectors(privateAllowed, settings.rootCa) });
  const run = (async () => {
    if (settings.startTls && server.startsWith('ldap:')) await client.startTLS({ host, ...(net.isIP(host) ? {} : { servername: host }) });
    return work(client);
  })();
  // Once the deadline has answered, a late failure of the exchange has no one to tell.
  run.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UpstreamError('unreachable', `${host} did not answer in time`)), settings.timeoutMs);
  });
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
    // The unbind is a courtesy to the server; the login does not wait for it.
    client.unbind().catch(() => {});
  }
}

/** The exchange with the first server that answers (its bind refused or not: only an unreachable server passes to the next). */
async function withServer<T>(settings: LdapSettings, privateAllowed: boolean, work: (client: Client) => Promise<T>): Promise<T> {
  let last: UpstreamError | undefined;
  for (const server of settings.servers) {
    try {
      return await exchange(server, settings, privateAllowed, work);
    } catch (err) {
      last = upstreamErrorOf(err, new URL(server).hostname);
      if (last.reason !== 'unreachable') throw last;
    }
  }
  throw last ?? new UpstreamError('invalid', 'the provider names no server');
}

async function serviceBind(client: Client, settings: LdapSettings, bindPassword: string): Promise<void> {
  try {
    await client.bind(settings.bindDn, bindPassword);
  } catch (err) {
    if (err instanceof InvalidCredentialsError) throw new BindRefused();
    throw err;
  }
}

/** The one entry the name names; undefined for none or several (a name must pick one user). */
async function findEntry(client: Client, settings: LdapSettings, loginName: string): Promise<Entry | undefined> {
  const attributes = [...new Set(Object.values(settings.attributes).filter((name): name is string => !!name && name.toLowerCase() !== 'dn'))];
  try {
    const { searchEntries } = await client.search(searchBaseOf(settings), {
      scope: 'sub',
      filter: userSearchFilter(settings, loginName),
      attributes,
      sizeLimit: 2,
    });
    return searchEntries.length === 1 ? searchEntries[0] : undefined;
  } catch (err) {
    if (err instanceof SizeLimitExceededError) return undefined;
    throw err;
  }
}

// Random per process, so no one can add an entry of that name to a directory ahead of time.
const DECOY = `portcullis-no-entry-${randomBytes(12).toString('hex')}`;

/**
 * A DN no directory holds: a random value under the search base, named by
 * the first of `userFilters` like a user's. A name that finds no entry binds
 * as it, so the directory's answer comes after a search and a bind as for a
 * wrong password, and its timing does not tell which names exist
 * (docs/decisions.md, "LDAP unknown names").
 */
function decoyDnOf(settings: LdapSettings): string {
  return `${settings.userFilters[0] ?? 'cn'}=${DECOY},${searchBaseOf(settings)}`;
}

/** The bind of a name that found no entry: its answer is always a refusal, whatever the directory says (a socket failure aside, as for any bind). */
async function decoyBind(client: Client, settings: LdapSettings, password: string): Promise<LdapSignIn> {
  try {
    await client.bind(decoyDnOf(settings), password);
  } catch (err) {
    if (!(err instanceof ResultCodeError)) throw err;
  }
  return { refused: true };
}

export function ldapDirectory(privateAllowed: boolean): LdapDirectory {
  return {
    async check(settings, bindPassword) {
      await withServer(settings, privateAllowed, (client) => serviceBind(client, settings, bindPassword));
    },
    async authenticate(settings, bindPassword, loginName, password) {
      // RFC 4513 5.1.2: a bind with a name and no password is an unauthenticated one, which servers may let pass.
      if (!loginName || !password) return { refused: true };
      return withServer(settings, privateAllowed, async (client): Promise<LdapSignIn> => {
        await serviceBind(client, settings, bindPassword);
        const entry = await findEntry(client, settings, loginName);
        if (!entry) return decoyBind(client, settings, password);
        try {
          await client.bind(entry.dn, password);
        } catch (err) {
          if (err instanceof InvalidCredentialsError) return { refused: true, entryId: attributeValue(entry, settings.attributes.idAttribute) };
          throw err;
        }
        return { identity: identityOf(entry, settings.attributes, loginName) };
      });
    },
  };
}

/** The directory client for a provider: an instance-level one may reach loopback and private addresses (an intranet directory), an org's only with OUTBOUND_ALLOW_PRIVATE. */
export function ldapFor(outboundAllowPrivate: boolean): (scope: { orgId: string | null }) => LdapDirectory {
  const instance = ldapDirectory(privateAllowedFor('instance', outboundAllowPrivate));
  const org = ldapDirectory(privateAllowedFor('app', outboundAllowPrivate));
  return (scope) => (scope.orgId === null ? instance : org);
}
