import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { addressRefusal, privateAllowedFor } from '../../src/outbound/address-policy.ts';

// The rule the outbound client applies to every address it would connect
// to. A public https receiver cannot be reached from the test machine (it
// has no network), so the public path is proven here, on the rule itself.

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.215.14',
  '172.32.0.1', // just past 172.16.0.0/12
  '100.128.0.1', // just past 100.64.0.0/10
  '169.255.0.1', // just past 169.254.0.0/16
  '2606:4700:4700::1111',
  '2a00:1450:4001:82a::200e',
  '::ffff:8.8.8.8', // IPv4-mapped public address
  '0:0:0:0:0:ffff:808:808', // the same, written out
  '64:ff9b::808:808', // NAT64 of 8.8.8.8
  '2002:808:808::1', // 6to4 of 8.8.8.8
];

/** Never reached, whatever the settings: link-local, cloud metadata, multicast, reserved; in every IPv6 form. */
const NEVER = [
  '169.254.0.1',
  '169.254.169.254',
  '169.254.255.255',
  '100.100.100.200',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  'fe80::1',
  'febf:ffff::1',
  'fe80::1%eth0',
  'fd00:ec2::254',
  'ff02::1',
  '::ffff:169.254.169.254',
  '::ffff:a9fe:a9fe',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::169.254.169.254',
  '2002:a9fe:a9fe::1',
  '::169.254.169.254',
  '0:0:0:0:0:ffff:a9fe:a9fe',
  'FE80::1',
];

/** Loopback, private and other non-public ranges: only for instance-level callers or with OUTBOUND_ALLOW_PRIVATE. */
const PRIVATE = [
  '127.0.0.1',
  '127.255.255.254',
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.1',
  '10.255.255.255',
  '100.64.0.1',
  '100.127.255.254',
  '172.16.0.1',
  '172.31.255.254',
  '192.168.0.1',
  '192.168.255.254',
  '192.0.0.8',
  '192.0.2.1',
  '198.18.0.1',
  '198.51.100.1',
  '203.0.113.1',
  '::1',
  '::',
  'fc00::1',
  'fd12:3456::1',
  'fec0::1',
  '100::1',
  '2001::1',
  '2001:db8::1',
  '64:ff9b:1::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::ffff:192.168.1.1',
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.1',
  '2002:c0a8:101::1',
  '::127.0.0.1',
  '0000:0000:0000:0000:0000:0000:0000:0001',
];

describe('address policy', () => {
  test('public IPv4 and IPv6 addresses pass, with or without private addresses allowed', () => {
    for (const address of PUBLIC) {
      assert.equal(addressRefusal(address, false), undefined, address);
      assert.equal(addressRefusal(address, true), undefined, address);
    }
  });

  test('link-local, metadata, multicast and reserved addresses are refused even with private addresses allowed', () => {
    for (const address of NEVER) {
      assert.equal(addressRefusal(address, false), 'link-local, metadata or multicast', address);
      assert.equal(addressRefusal(address, true), 'link-local, metadata or multicast', address);
    }
  });

  test('loopback and private addresses are refused unless allowed', () => {
    for (const address of PRIVATE) {
      assert.equal(addressRefusal(address, false), 'loopback or private', address);
      assert.equal(addressRefusal(address, true), undefined, address);
    }
  });

  test('anything but an IP address is refused: names are judged by what they resolve to', () => {
    for (const input of [
      'localhost',
      'vm',
      'example.com',
      '',
      '[::1]',
      '127.1',
      '0x7f.0.0.1',
      '1.2.3',
      '256.1.1.1',
      '01.2.3.4',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7',
      '1::2::3',
      ':::1',
      'g::1',
      '::ffff:1.2.3.256',
      '12345::1',
    ]) {
      assert.equal(addressRefusal(input, true), 'not an IP address', input);
    }
  });

  test('every address Node calls an IP address is parsed, and nothing else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), (input) => {
        assert.equal(addressRefusal(input, true) !== 'not an IP address', isIP(input) !== 0, input);
      }),
      { numRuns: 5000 },
    );
  });

  test('an IPv4 address and the IPv6 forms that carry it (mapped, NAT64, 6to4) get the same answer', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.boolean(), (v4, privateAllowed) => {
        const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
        const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        const expected = addressRefusal(v4, privateAllowed);
        for (const form of [`::ffff:${v4}`, `::ffff:${hex}`, `64:ff9b::${v4}`, `64:ff9b::${hex}`, `2002:${hex}::1`]) {
          assert.equal(addressRefusal(form, privateAllowed), expected, `${form} (${v4})`);
        }
      }),
      { numRuns: 5000 },
    );
  });

  test('an instance-level caller may reach private addresses; an app only with OUTBOUND_ALLOW_PRIVATE', () => {
    assert.equal(privateAllowedFor('instance', false), true);
    assert.equal(privateAllowedFor('app', false), false);
    assert.equal(privateAllowedFor('app', true), true);
  });
});
