import { BlockList, isIP } from 'node:net';

/**
 * Who asks for an outbound call. Instance-level callers (the IAM_OWNER's
 * identity providers and action targets) may reach an intranet; an app's
 * settings belong to an org, whose owner must not be able to make the
 * server call the machines around it.
 */
export type CallerTrust = 'instance' | 'app';

export type AddressRefusal = 'not an IP address' | 'link-local, metadata or multicast' | 'loopback or private';

type Range = readonly [network: string, prefix: number];

/** Ranges whose IPv4 address an IPv6 one embeds: NAT64 (RFC 6052), 6to4 (RFC 3056), IPv4-compatible (RFC 4291 2.5.5.1). */
function embedded([network, prefix]: Range): Range[] {
  const [a = 0, b = 0, c = 0, d = 0] = network.split('.').map(Number);
  const high = ((a << 8) | b).toString(16);
  const low = ((c << 8) | d).toString(16);
  return [
    [`64:ff9b::${high}:${low}`, 96 + prefix],
    [`2002:${high}:${low}::`, 16 + prefix],
    [`::${high}:${low}`, 96 + prefix],
  ];
}

function blockList(ranges: Range[]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, isIP(network) === 4 ? 'ipv4' : 'ipv6');
  return list;
}

// IPv4 rules of a BlockList also match the IPv4-mapped IPv6 form
// (::ffff:169.254.169.254, ::ffff:a9fe:a9fe); the other embeddings are listed.
const NEVER_V4: Range[] = [
  ['169.254.0.0', 16], // link-local, where clouds serve instance metadata (RFC 3927)
  ['100.100.100.200', 32], // Alibaba Cloud's instance metadata
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

/** Never reached, whatever the settings or the caller. */
const NEVER = blockList([
  ...NEVER_V4,
  ...NEVER_V4.flatMap(embedded),
  ['fe80::', 10], // link-local (RFC 4291)
  ['fd00:ec2::254', 128], // AWS instance metadata over IPv6
  ['ff00::', 8], // multicast
]);

const PRIVATE_V4: Range[] = [
  ['0.0.0.0', 8], // "this network": 0.0.0.0 reaches the host itself
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space, carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (RFC 5737), and the two below
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking (RFC 2544)
];

/** Loopback, private and other non-public ranges (RFC 6890): only for trusted callers or with OUTBOUND_ALLOW_PRIVATE. */
const PRIVATE = blockList([
  ...PRIVATE_V4,
  ...PRIVATE_V4.flatMap(embedded),
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible block
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215)
  ['100::', 64], // discard-only (RFC 6666)
  ['2001::', 32], // Teredo: the IPv4 address inside is obfuscated
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (RFC 4193)
  ['fec0::', 10], // site-local (deprecated)
]);

/**
 * Why the server must not connect to `address` (an IP address, as a
 * resolver answers it or as written in a URL without brackets), or
 * undefined when it may. Link-local and metadata addresses are refused
 * even when private ones are allowed.
 */
export function addressRefusal(address: string, privateAllowed: boolean): AddressRefusal | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  // A zone index (fe80::1%eth0) names a link: only link-local addresses carry one.
  if (address.includes('%')) return 'link-local, metadata or multicast';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (NEVER.check(address, type)) return 'link-local, metadata or multicast';
  if (!privateAllowed && PRIVATE.check(address, type)) return 'loopback or private';
  return undefined;
}

/** Whether a caller of this trust may reach private addresses on this instance. */
export function privateAllowedFor(trust: CallerTrust, outboundAllowPrivate: boolean): boolean {
  return outboundAllowPrivate || trust === 'instance';
}
