import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isBlockedAddress } from '../../shared/src/net/address.ts';

const blocked: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback range'],
  ['10.0.0.1', 'private 10/8'],
  ['10.255.255.255', 'private 10/8 end'],
  ['172.16.0.1', 'private 172.16/12 start'],
  ['172.31.255.255', 'private 172.16/12 end'],
  ['192.168.1.1', 'private 192.168/16'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'cloud metadata'],
  ['100.64.0.1', 'CGNAT start'],
  ['100.127.255.255', 'CGNAT end'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'this network 0/8'],
  ['192.0.0.192', 'IETF protocol assignments'],
  ['198.18.0.1', 'benchmarking'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['::1', 'IPv6 loopback'],
  ['::', 'IPv6 unspecified'],
  ['0:0:0:0:0:0:0:1', 'IPv6 loopback, long form'],
  ['fc00::1', 'unique local'],
  ['fd12:3456:789a::1', 'unique local fd'],
  ['fd00:ec2::254', 'AWS IPv6 metadata'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with zone'],
  ['febf:ffff::1', 'link-local end of fe80::/10'],
  ['fec0::1', 'deprecated site-local'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
  ['0:0:0:0:0:ffff:192.168.0.1', 'IPv4-mapped private, long form'],
  ['::127.0.0.1', 'deprecated IPv4-compatible'],
  ['64:ff9b::7f00:1', 'NAT64 of loopback'],
  ['64:ff9b::10.0.0.1', 'NAT64 of private'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:a00:1::', '6to4 of private'],
  ['2001:db8::1', 'documentation'],
  ['not-an-ip', 'unparseable fails closed'],
  ['', 'empty fails closed'],
  ['256.1.1.1', 'invalid octet fails closed'],
];

const allowed: Array<[string, string]> = [
  ['8.8.8.8', 'public IPv4'],
  ['1.1.1.1', 'public IPv4'],
  ['93.184.216.34', 'public IPv4'],
  ['172.15.255.255', 'just below 172.16/12'],
  ['172.32.0.1', 'just above 172.16/12'],
  ['100.63.255.255', 'just below CGNAT'],
  ['100.128.0.1', 'just above CGNAT'],
  ['169.253.255.255', 'just below link-local'],
  ['11.0.0.1', 'just above 10/8'],
  ['192.169.0.1', 'just above 192.168/16'],
  ['2606:4700:4700::1111', 'public IPv6'],
  ['2a00:1450:4001:82b::200e', 'public IPv6'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ['64:ff9b::808:808', 'NAT64 of public'],
  ['2002:808:808::1', '6to4 of public'],
];

describe('isBlockedAddress', () => {
  for (const [ip, why] of blocked) {
    it(`blocks ${ip || '(empty)'} (${why})`, () => assert.equal(isBlockedAddress(ip), true));
  }
  for (const [ip, why] of allowed) {
    it(`allows ${ip} (${why})`, () => assert.equal(isBlockedAddress(ip), false));
  }
});
