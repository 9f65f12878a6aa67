import { parseIdpMetadata, type IdpMetadata } from '../domain/saml/idp-metadata.ts';
import { givenIdpMetadata } from '../domain/saml/sp-metadata-rule.ts';
import type { OutboundFetch } from './client.ts';
import { OutboundError } from './errors.ts';
import { UpstreamError } from './upstream.ts';

// A SAML provider's IdP metadata: the XML it was given, or its metadataUrl
// read through the outbound client (docs/idps.md, Outbound calls); sign-ins
// read it through the cache of ./upstream-cache.ts.

/** The metadata at `url`, or UpstreamError: unreachable (down, refused address, too large) or invalid (not IdP metadata). */
export async function fetchIdpMetadata(url: string, fetch: OutboundFetch): Promise<IdpMetadata> {
  let text: string;
  try {
    const res = await fetch(url, { headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    if (res.status !== 200) throw new UpstreamError('unreachable', `the metadata URL answered ${res.status}`);
    text = await res.text();
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    const cause = err instanceof OutboundError ? err : (err as { cause?: unknown } | null)?.cause;
    throw new UpstreamError('unreachable', cause instanceof OutboundError ? cause.message : 'the metadata URL could not be read');
  }
  try {
    return parseIdpMetadata(text);
  } catch (err) {
    throw new UpstreamError('invalid', `the metadata is not usable: ${(err as Error).message}`);
  }
}

/** The IdP metadata given as base64 XML, or UpstreamError (invalid). */
export function givenMetadata(base64: string): IdpMetadata {
  try {
    return givenIdpMetadata(base64);
  } catch (err) {
    throw new UpstreamError('invalid', `the metadata is not usable: ${(err as Error).message}`);
  }
}
