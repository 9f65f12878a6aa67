// Bytes the API carries as standard base64 with padding (RFC 4648 4): user
// metadata values, SAML metadata documents. The console shows and takes
// them as UTF-8 text.

/** Text as the API wants it: its UTF-8 bytes in base64. */
export function base64Of(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function bytesOf(base64: string): Uint8Array {
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as text, or undefined when they are not base64 of UTF-8 text. */
export function textOf(base64: string): string | undefined {
  try {
    return strictUtf8.decode(bytesOf(base64));
  } catch {
    return undefined;
  }
}
