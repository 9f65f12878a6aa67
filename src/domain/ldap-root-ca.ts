import { X509Certificate } from 'node:crypto';
import type { FieldViolation } from './errors.ts';

/**
 * An LDAP provider's `rootCa` (docs/idps.md, LDAP): the certificates its
 * TLS connections trust instead of Node's CAs. Apart from ./ldap.ts, which
 * the console bundles, since it needs node:crypto.
 */

/** At most this many certificates in `rootCa`: a private CA's chain, not a system store. */
export const ROOT_CA_MAX_CERTIFICATES = 20;

/** The PEM blocks of a text (RFC 7468 2), or a problem: text outside the blocks, a block left open or closed under another label. */
function pemBlocks(pem: string): Array<{ label: string; body: string }> | string {
  const blocks: Array<{ label: string; body: string }> = [];
  let open: { label: string; lines: string[] } | undefined;
  for (const line of pem.split(/\r?\n/).map((l) => l.trim())) {
    const begin = /^-----BEGIN ([^-]+)-----$/.exec(line);
    const end = /^-----END ([^-]+)-----$/.exec(line);
    if (open) {
      if (begin) return 'has a PEM block that is not closed';
      if (!end) open.lines.push(line);
      else if (end[1] !== open.label) return 'has a PEM block that is not closed';
      else {
        blocks.push({ label: open.label, body: open.lines.join('\n') });
        open = undefined;
      }
    } else if (begin) open = { label: begin[1]!, lines: [] };
    else if (line) return 'must hold PEM CERTIFICATE blocks and nothing else';
  }
  return open ? 'has a PEM block that is not closed' : blocks;
}

/**
 * What is wrong with a `rootCa` value: it must be PEM (RFC 7468) holding
 * one or more CERTIFICATE blocks and nothing else, each an X.509
 * certificate. A private key pasted along is refused outright: it would be
 * stored and shown like any other field.
 */
export function ldapRootCaProblem(pem: string): string | undefined {
  if (pem.includes('PRIVATE KEY')) return 'must not hold a private key';
  const blocks = pemBlocks(pem);
  if (typeof blocks === 'string') return blocks;
  if (!blocks.length) return 'must be PEM certificates (-----BEGIN CERTIFICATE-----)';
  if (blocks.some(({ label }) => label !== 'CERTIFICATE')) return 'must hold only CERTIFICATE blocks';
  if (blocks.length > ROOT_CA_MAX_CERTIFICATES) return `must hold at most ${ROOT_CA_MAX_CERTIFICATES} certificates`;
  for (const { body } of blocks) {
    try {
      new X509Certificate(`-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`);
    } catch {
      return 'holds a block that is not an X.509 certificate';
    }
  }
  return undefined;
}

/** A body's `rootCa` when it is no usable set of trust anchors. */
export function ldapRootCaViolations(body: Record<string, unknown>): FieldViolation[] {
  if (typeof body.rootCa !== 'string' || !body.rootCa) return [];
  const problem = ldapRootCaProblem(body.rootCa);
  return problem ? [{ field: 'rootCa', description: problem }] : [];
}
