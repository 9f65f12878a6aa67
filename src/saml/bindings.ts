import { inflateRawSync } from 'node:zlib';
import { MESSAGE_LIMITS, SamlRefused } from '../domain/saml/xml.ts';

// The two bindings a service provider sends messages with (SAML 2.0
// Bindings): HTTP-Redirect (3.4: DEFLATE, base64, URL-encoded, the
// signature over the query) and HTTP-POST (3.5: base64 in a form field,
// any signature inside the XML).

export type MessageField = 'SAMLRequest' | 'SAMLResponse';

export interface InboundMessage {
  binding: 'redirect' | 'post';
  xml: string;
  relayState?: string;
  /** The Redirect binding's signature: the signed octets exactly as the URL carried them. */
  querySignature?: { octets: string; sigAlg: string; signature: string };
}

/** RelayState is meant to stay under 80 bytes (Bindings 3.4.3); SPs that put a return URL there need more. */
const MAX_RELAY_STATE = 2048;

function base64Bytes(value: string): Buffer {
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length === 0) throw new SamlRefused('the message is not base64');
  return Buffer.from(compact, 'base64');
}

function utf8(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  if (text.includes('\uFFFD')) throw new SamlRefused('the message is not UTF-8');
  return text;
}

export function relay(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length > MAX_RELAY_STATE || value.includes('\u0000') || !value.isWellFormed()) throw new SamlRefused('RelayState is too long or not text');
  return value;
}

/** The message of a Redirect-binding query (the raw query string, so the signed octets are exactly those sent). */
export function readRedirect(rawQuery: string, field: MessageField): InboundMessage {
  const raw = new Map<string, string>();
  for (const part of rawQuery.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    if (raw.has(name)) throw new SamlRefused(`${name} is repeated`);
    raw.set(name, eq === -1 ? '' : part.slice(eq + 1));
  }
  const decode = (name: string) => {
    const value = raw.get(name);
    if (value === undefined) return undefined;
    try {
      return decodeURIComponent(value.replace(/\+/g, ' '));
    } catch {
      throw new SamlRefused(`${name} is not URL-encoded`);
    }
  };
  const message = decode(field);
  if (!message) throw new SamlRefused(`no ${field}`);
  let xml: string;
  try {
    xml = utf8(inflateRawSync(base64Bytes(message), { maxOutputLength: MESSAGE_LIMITS.maxBytes }));
  } catch (err) {
    if (err instanceof SamlRefused) throw err;
    throw new SamlRefused('the message is not DEFLATE-compressed or is too large');
  }
  const relayState = relay(decode('RelayState'));
  const sigAlg = decode('SigAlg');
  const signature = decode('Signature');
  const inbound: InboundMessage = { binding: 'redirect', xml, ...(relayState === undefined ? {} : { relayState }) };
  if (signature === undefined && sigAlg === undefined) return inbound;
  if (!signature || !sigAlg) throw new SamlRefused('a signed message needs both SigAlg and Signature');
  // Bindings 3.4.4.1: the parameters in this order, as they were encoded.
  const octets = [field, 'RelayState', 'SigAlg']
    .filter((name) => raw.has(name))
    .map((name) => `${name}=${raw.get(name)}`)
    .join('&');
  return { ...inbound, querySignature: { octets, sigAlg, signature } };
}

/** The message of a POST-binding form. */
export function readPost(form: Record<string, unknown>, field: MessageField): InboundMessage {
  const value = form[field];
  if (typeof value !== 'string' || !value) throw new SamlRefused(`no ${field}`);
  const bytes = base64Bytes(value);
  if (bytes.length > MESSAGE_LIMITS.maxBytes) throw new SamlRefused(`larger than ${MESSAGE_LIMITS.maxBytes} bytes`);
  const relayState = form.RelayState;
  if (relayState !== undefined && typeof relayState !== 'string') throw new SamlRefused('RelayState is repeated');
  const state = relay(relayState);
  return { binding: 'post', xml: utf8(bytes), ...(state === undefined ? {} : { relayState: state }) };
}
