// A user's metadata (docs/api/users.md, "Metadata"): plain rules, no SQL.

/** Keys are names a claim object carries: letters, digits and `_ . : -`, not starting with `_` (the search's path). */
export const METADATA_KEY = /^[A-Za-z0-9.:-][A-Za-z0-9_.:-]{0,199}$/;

/** A value holds at most this many bytes (its base64 text a third more). */
export const MAX_METADATA_BYTES = 4096;

/** Keys per user: every one travels in a token that asks for the metadata scope. */
export const MAX_METADATA_KEYS = 100;

/** Standard base64 with padding (RFC 4648 4), as the API writes and reads values. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of a base64 value, or why it cannot be one. */
export function metadataValue(text: string): Buffer | string {
  if (!text || !BASE64.test(text)) return 'must be non-empty standard base64 (RFC 4648 4)';
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length > MAX_METADATA_BYTES) return `must decode to at most ${MAX_METADATA_BYTES} bytes`;
  return bytes;
}
