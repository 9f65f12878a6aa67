import { createHmac, randomBytes } from 'node:crypto';
import { digestsEqual } from '../security/secrets.ts';

// TOTP (RFC 6238) as authenticator apps implement it: HMAC-SHA-1, 6 digits,
// 30-second steps counted from the Unix epoch (RFC 4226 dynamic truncation).

export const TOTP_DIGITS = 6;
export const TOTP_PERIOD = 30;
/** Steps either side of now that are still accepted (clock drift, typing time). */
export const TOTP_WINDOW = 1;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding, as otpauth URIs carry secrets. */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error('not base32');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret: 160 bits, the HMAC-SHA-1 key length RFC 4226 recommends. */
export function newTotpSecret(): Buffer {
  return randomBytes(20);
}

export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_PERIOD);
}

/** The code of one time step (RFC 4226 5.3). */
export function totpCode(secret: Uint8Array, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** TOTP_DIGITS;
  return String(binary).padStart(TOTP_DIGITS, '0');
}

export function looksLikeTotpCode(code: string): boolean {
  return new RegExp(`^[0-9]{${TOTP_DIGITS}}$`).test(code);
}

/**
 * The step whose code `code` is, within the window around now, or undefined.
 * Steps at or before `lastStep` are refused: once a step's code was
 * accepted, neither it nor an earlier one works again (RFC 6238 5.2).
 */
export function matchTotp(secret: Uint8Array, code: string, nowMs: number, lastStep: number | null): number | undefined {
  if (!looksLikeTotpCode(code)) return undefined;
  const now = totpStep(nowMs);
  let matched: number | undefined;
  // Every candidate is compared, so the time taken says nothing about which matched.
  for (let step = now - TOTP_WINDOW; step <= now + TOTP_WINDOW; step++) {
    if (digestsEqual(Buffer.from(totpCode(secret, step)), Buffer.from(code)) && (lastStep === null || step > lastStep)) matched ??= step;
  }
  return matched;
}

/** The otpauth URI authenticator apps read from the QR code (Key Uri Format). */
export function otpauthUri(secret: Uint8Array, issuer: string, account: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const params = new URLSearchParams({ secret: base32Encode(secret), issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_PERIOD) });
  return `otpauth://totp/${label}?${params}`;
}

/** Ten recovery codes of 10 characters from an unambiguous alphabet (about 50 bits each), shown as xxxxx-xxxxx. */
export function newRecoveryCodes(count = 10): string[] {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  return Array.from({ length: count }, () => {
    const bytes = randomBytes(10);
    const chars = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** A recovery code as typed: case, spaces and the dash do not matter. */
export function normaliseRecoveryCode(code: string): string {
  const clean = code.toLowerCase().replace(/[\s-]/g, '');
  return clean.length === 10 ? `${clean.slice(0, 5)}-${clean.slice(5)}` : clean;
}
