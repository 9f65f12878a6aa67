// Pure: no Node modules, so that app validation (src/domain/apps.ts, also
// bundled into the console) applies the same rule to literal addresses.

/**
 * Who asks for an outbound call. Instance-level callers (the IAM_OWNER's
 * identity providers and action targets) may reach an intranet; an app's
 * settings belong to an org, whose owner must not be able to make the
 * server call the machines around it.
 */
export type CallerTrust = 'instance' | 'app';

export type AddressRefusal = 'not an IP address' | 'link-local, metadata or multicast' | 'loopback or private';

/** An IPv4 address as a 32-bit number: four decimal octets, as resolvers answer and URL parsers write them. */
function parseIPv4(text: string): bigint | undefined {
  const octets = text.split('.');
  if (octets.length !== 4 || !octets.every((octet) => /^(0|[1-9]\d{0,2})$/.test(octet) && Number(octet) <= 255)) return undefined;
  return octets.reduce((value, octet) => (value << 8n) | BigInt(octet), 0n);
}

/** An IPv6 address as a 128-bit number (RFC 4291 2.2: `::` once, an IPv4 tail allowed). */
function parseIPv6(text: string): bigint | undefined {
  let groups = text;
  const tail: bigint[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseIPv4(dotted[2]!);
    if (v4 === undefined) return undefined;
    tail.push(v4 >> 16n, v4 & 0xffffn);
    groups = dotted[1]!.endsWith('::') ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = groups.split('::');
  if (halves.length > 2) return undefined;
  const fields = (part: string) => (part === '' ? [] : part.split(':'));
  const [before, after] = [fields(halves[0]!), fields(halves[1] ?? '')];
  if (![...before, ...after].every((field) => /^[0-9a-f]{1,4}$/i.test(field))) return undefined;
  const count = before.length + after.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  const values = [...before.map((f) => BigInt(`0x${f}`)), ...Array<bigint>(8 - count).fill(0n), ...after.map((f) => BigInt(`0x${f}`)), ...tail];
  return values.reduce((value, field) => (value << 16n) | field, 0n);
}

const MAPPED = 0xffff_0000_0000n;

/** An address as 128 bits, IPv4 in its IPv4-mapped form (::ffff:a.b.c.d, RFC 4291 2.5.5.2). */
function parseAddress(text: string): bigint | undefined {
  const v4 = parseIPv4(text);
  return v4 === undefined ? parseIPv6(text) : MAPPED | v4;
}

type Range = { network: bigint; prefix: number };

/** `a.b.c.d/n` (as its IPv4-mapped range) or `v6::/n`. */
function range(cidr: string): Range {
  const [address, bits] = cidr.split('/') as [string, string];
  const v4 = parseIPv4(address);
  return v4 === undefined ? { network: parseIPv6(address)!, prefix: Number(bits) } : { network: MAPPED | v4, prefix: 96 + Number(bits) };
}

function within(value: bigint, { network, prefix }: Range): boolean {
  const shift = BigInt(128 - prefix);
  return value >> shift === network >> shift;
}

const NAT64 = range('64:ff9b::/96'); // RFC 6052
const SIX_TO_FOUR = range('2002::/16'); // RFC 3056
const IPV4_COMPATIBLE = range('::/96'); // RFC 4291 2.5.5.1, deprecated

/** The IPv4 address an IPv6 one carries (NAT64, 6to4, IPv4-compatible), in its mapped form; a v4-mapped address already is one. */
function embeddedIPv4(value: bigint): bigint | undefined {
  if (within(value, NAT64) || within(value, IPV4_COMPATIBLE)) return MAPPED | (value & 0xffff_ffffn);
  if (within(value, SIX_TO_FOUR)) return MAPPED | ((value >> 80n) & 0xffff_ffffn);
  return undefined;
}

/** Never reached, whatever the settings or the caller. */
const NEVER = [
  '169.254.0.0/16', // link-local, where clouds serve instance metadata (RFC 3927)
  '100.100.100.200/32', // Alibaba Cloud's instance metadata
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and the broadcast address
  'fe80::/10', // link-local (RFC 4291)
  'fd00:ec2::254/128', // AWS instance metadata over IPv6
  'ff00::/8', // multicast
].map(range);

/** Loopback, private and other non-public ranges (RFC 6890): only for trusted callers or with OUTBOUND_ALLOW_PRIVATE. */
const PRIVATE = [
  '0.0.0.0/8', // "this network": 0.0.0.0 reaches the host itself
  '10.0.0.0/8',
  '100.64.0.0/10', // shared address space, carrier-grade NAT (RFC 6598)
  '127.0.0.0/8',
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation (RFC 5737), and the two below
  '198.51.100.0/24',
  '203.0.113.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15', // benchmarking (RFC 2544)
  '::/96', // unspecified, loopback and the deprecated IPv4-compatible block
  '64:ff9b:1::/48', // local-use NAT64 (RFC 8215)
  '100::/64', // discard-only (RFC 6666)
  '2001::/32', // Teredo: the IPv4 address inside is obfuscated
  '2001:2::/48', // benchmarking
  '2001:db8::/32', // documentation
  'fc00::/7', // unique local (RFC 4193)
  'fec0::/10', // site-local (deprecated)
].map(range);

/**
 * Why the server must not connect to `address` (an IP address, as a
 * resolver answers it or as a URL writes it, without brackets), or
 * undefined when it may. An IPv6 address carrying an IPv4 one is judged by
 * both. Link-local and metadata addresses are refused even when private
 * ones are allowed.
 */
export function addressRefusal(address: string, privateAllowed: boolean): AddressRefusal | undefined {
  const [bare, zone] = address.split('%', 2);
  const value = parseAddress(bare!);
  if (value === undefined) return 'not an IP address';
  // A zone index (fe80::1%eth0) names a link: only link-local addresses carry one.
  if (zone !== undefined) return 'link-local, metadata or multicast';
  const forms = [value, embeddedIPv4(value)].filter((form) => form !== undefined);
  const inAny = (ranges: Range[]) => forms.some((form) => ranges.some((r) => within(form, r)));
  if (inAny(NEVER)) return 'link-local, metadata or multicast';
  if (!privateAllowed && inAny(PRIVATE)) return 'loopback or private';
  return undefined;
}

/** Whether a caller of this trust may reach private addresses on this instance. */
export function privateAllowedFor(trust: CallerTrust, outboundAllowPrivate: boolean): boolean {
  return outboundAllowPrivate || trust === 'instance';
}
