import type { ExternalIdentity } from '../../outbound/upstream.ts';
import type { SamlSettings } from './sp-kind.ts';
import type { SamlAssertion } from './sp-response.ts';
import { SamlRefused } from './xml.ts';

// The profile an external IdP's assertion gives (docs/idps.md, SAML):
// attributes named by their OID (RFC 4519 and eduPerson, as
// urn:oid:…, the SAML V2.0 X.500/LDAP attribute profile), by the short
// names many IdPs send (`Email`, `FirstName`, `SurName`, `UserName`), or by
// the claim URIs of ADFS and Entra ID.

const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';
const CLAIMS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/';

const NAMES = {
  email: ['urn:oid:0.9.2342.19200300.100.1.3', 'Email', 'email', 'mail', `${CLAIMS}emailaddress`],
  givenName: ['urn:oid:2.5.4.42', 'FirstName', 'givenName', `${CLAIMS}givenname`],
  familyName: ['urn:oid:2.5.4.4', 'SurName', 'sn', 'surname', `${CLAIMS}surname`],
  displayName: ['urn:oid:2.16.840.1.113730.3.1.241', 'DisplayName', 'displayName', 'http://schemas.microsoft.com/identity/claims/displayname'],
  preferredUsername: ['UserName', 'urn:oid:0.9.2342.19200300.100.1.1', 'uid', 'urn:oid:1.3.6.1.4.1.5923.1.1.1.6', `${CLAIMS}name`],
  locale: ['urn:oid:2.16.840.1.113730.3.1.39', 'preferredLanguage'],
  phone: ['urn:oid:2.5.4.20', 'telephoneNumber', 'urn:oid:0.9.2342.19200300.100.1.41', 'mobile'],
} as const;

function first(attributes: Record<string, string[]>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = attributes[name]?.find((v) => v.trim());
    if (value) return value.trim().slice(0, 500);
  }
  return undefined;
}

/**
 * The identity of the assertion. Its id is the NameID; a transient NameID
 * changes at every sign-in, so then the id is the value of
 * `transientMappingAttributeName`, and without one the sign-in is refused.
 */
export function samlIdentityOf(assertion: SamlAssertion, settings: Pick<SamlSettings, 'transientMappingAttributeName' | 'nameIdFormat'>): ExternalIdentity {
  const { attributes } = assertion;
  const transient = assertion.nameIdFormat === TRANSIENT || settings.nameIdFormat === TRANSIENT;
  let id = assertion.nameId;
  if (transient) {
    const mapped = settings.transientMappingAttributeName && first(attributes, [settings.transientMappingAttributeName]);
    if (!mapped) throw new SamlRefused('the NameID is transient and the assertion lacks the attribute that names the user');
    id = mapped;
  }
  const field = (names: readonly string[]) => first(attributes, names);
  const optional = (key: keyof ExternalIdentity, value: string | undefined) => (value ? { [key]: value } : {});
  return {
    id,
    // SAML says nothing of whether the IdP checked the address (docs/decisions.md).
    emailVerified: false,
    amr: [],
    ...optional('email', field(NAMES.email)),
    ...optional('givenName', field(NAMES.givenName)),
    ...optional('familyName', field(NAMES.familyName)),
    ...optional('displayName', field(NAMES.displayName)),
    ...optional('preferredUsername', field(NAMES.preferredUsername)),
    ...optional('locale', field(NAMES.locale)),
    ...optional('phone', field(NAMES.phone)),
  };
}
