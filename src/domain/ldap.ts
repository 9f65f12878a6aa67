import type { FieldViolation } from './errors.ts';

/**
 * The `ldap` provider kind (docs/idps.md, LDAP): its fields, the rules a
 * schema cannot say, and the search filter a sign-in sends. Pure, so the
 * filter's escaping is tested without a directory.
 */

/** The profile fields an entry's attributes fill, each naming the attribute. */
export const LDAP_ATTRIBUTE_FIELDS = [
  'idAttribute',
  'firstNameAttribute',
  'lastNameAttribute',
  'displayNameAttribute',
  'emailAttribute',
  'emailVerifiedAttribute',
  'phoneAttribute',
  'preferredUsernameAttribute',
  'preferredLanguageAttribute',
] as const;

export type LdapAttributes = Partial<Record<(typeof LDAP_ATTRIBUTE_FIELDS)[number], string>> & { idAttribute: string };

/** What a sign-in needs of the provider, the bind password aside. */
export interface LdapSettings {
  servers: string[];
  startTls: boolean;
  baseDn: string;
  bindDn: string;
  userBase: string;
  userObjectClasses: string[];
  userFilters: string[];
  timeoutMs: number;
  attributes: LdapAttributes;
  /** PEM certificates that alone are trusted for the servers' TLS; undefined: Node's trusted CAs. */
  rootCa?: string;
}

/** RFC 4512 1.4: an attribute description is a descriptor (keystring) or a numeric OID. */
const ATTRIBUTE_NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^(?:[A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\\.[0-9]+)*)$',
  description: 'must be an attribute name (RFC 4512: a letter, then letters, digits, -; or a numeric OID)',
} as const;

const ATTRIBUTE_NAMES = { type: 'array', minItems: 1, maxItems: 20, uniqueItems: true, items: ATTRIBUTE_NAME } as const;

const DN = {
  type: 'string',
  minLength: 1,
  maxLength: 1000,
  pattern: '^[^\\u0000-\\u001f]*$',
  description: 'must be a distinguished name (RFC 4514), no control characters',
} as const;

export const LDAP_PROPERTIES: Record<string, object> = {
  servers: {
    type: 'array',
    minItems: 1,
    maxItems: 10,
    uniqueItems: true,
    items: { type: 'string', minLength: 1, maxLength: 2048 },
  },
  startTls: { type: 'boolean' },
  baseDn: DN,
  bindDn: DN,
  bindPassword: { type: 'string', minLength: 1, maxLength: 1024 },
  userBase: DN,
  userObjectClasses: ATTRIBUTE_NAMES,
  userFilters: ATTRIBUTE_NAMES,
  timeout: {
    type: 'string',
    pattern: '^(?:[1-9]|[1-5][0-9]|60)s$',
    description: 'must be a duration of 1 to 60 whole seconds, like "5s"',
  },
  rootCa: { type: 'string', minLength: 1, maxLength: 65536 },
  attributes: {
    type: 'object',
    additionalProperties: false,
    required: ['idAttribute'],
    properties: Object.fromEntries(LDAP_ATTRIBUTE_FIELDS.map((field) => [field, ATTRIBUTE_NAME])),
  },
};

export const LDAP_REQUIRED = ['servers', 'baseDn', 'bindDn', 'bindPassword', 'userBase', 'userObjectClasses', 'userFilters', 'attributes'];

export const LDAP_DEFAULTS = { startTls: false, timeout: '5s' };

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Where a directory may be: `ldaps://host[:port]`, or `ldap://` with
 * StartTLS; `ldap://` in the clear only on a loopback host, since the bind
 * password and the user's password travel in the bind request (the rule
 * https upstreams follow too). Never credentials, a path or a query.
 */
export function ldapServerProblem(value: string, startTls: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an ldap:// or ldaps:// URL';
  }
  if (url.protocol !== 'ldap:' && url.protocol !== 'ldaps:') return 'must be an ldap:// or ldaps:// URL';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not carry credentials';
  if ((url.pathname && url.pathname !== '/') || url.search || value.includes('#')) return 'must be scheme, host and port only';
  if (url.protocol === 'ldap:' && !startTls && !LOOPBACK.test(url.hostname))
    return 'must be ldaps:// or use startTls (ldap:// in the clear only on a loopback host)';
  return undefined;
}

/** The servers of a body that are no usable directory address. */
export function ldapServerViolations(body: Record<string, unknown>): FieldViolation[] {
  if (!Array.isArray(body.servers)) return [];
  const startTls = body.startTls === true;
  return body.servers.flatMap((value, i) => {
    if (typeof value !== 'string' || !value) return [];
    const problem = ldapServerProblem(value, startTls);
    return problem ? [{ field: `servers[${i}]`, description: problem }] : [];
  });
}

/** The provider's stored fields as a sign-in uses them. */
export function ldapSettingsOf(config: Record<string, unknown>): LdapSettings {
  const strings = (field: string) => (Array.isArray(config[field]) ? (config[field] as string[]) : []);
  return {
    servers: strings('servers'),
    startTls: config.startTls === true,
    baseDn: String(config.baseDn ?? ''),
    bindDn: String(config.bindDn ?? ''),
    userBase: String(config.userBase ?? ''),
    userObjectClasses: strings('userObjectClasses'),
    userFilters: strings('userFilters'),
    timeoutMs: Number.parseInt(String(config.timeout ?? LDAP_DEFAULTS.timeout), 10) * 1000,
    attributes: (config.attributes ?? { idAttribute: '' }) as LdapAttributes,
    ...(typeof config.rootCa === 'string' && config.rootCa ? { rootCa: config.rootCa } : {}),
  };
}

/**
 * A value for a filter's assertion (RFC 4515 3): `*`, `(`, `)`, `\` and
 * NUL as `\XX`, so a typed name is compared as it is and never becomes a
 * wildcard or a filter of its own. Other bytes pass as UTF-8.
 */
export function escapeFilterValue(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the characters RFC 4515 3 says to escape
  return value.replace(/[*()\\\u0000]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * The search for the user a login name names: an entry of every one of
 * `userObjectClasses` whose attribute of any of `userFilters` equals it.
 */
export function userSearchFilter(settings: Pick<LdapSettings, 'userObjectClasses' | 'userFilters'>, loginName: string): string {
  const value = escapeFilterValue(loginName);
  const classes = settings.userObjectClasses.map((c) => `(objectClass=${c})`).join('');
  const names = settings.userFilters.map((attribute) => `(${attribute}=${value})`).join('');
  return `(&${classes}(|${names}))`;
}

/**
 * Where a user is searched: `userBase` when it is a DN of its own, under
 * `baseDn` when it is relative to it (`ou=people`); ZITADEL's usual value
 * `dn` (bind as the entry's own DN, which is what we always do) and any
 * other value without `=` search the whole `baseDn`.
 */
export function searchBaseOf(settings: Pick<LdapSettings, 'baseDn' | 'userBase'>): string {
  const base = settings.baseDn.trim();
  const users = settings.userBase.trim();
  if (!users.includes('=')) return base;
  return users.toLowerCase().endsWith(base.toLowerCase()) ? users : `${users},${base}`;
}
