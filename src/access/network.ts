// Client address classification: which callers count as local (autologin) or external (login response flag).
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Private, loopback and link-local ranges: a client from here is not "external". */
const LAN_RANGES = ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '::1/128', 'fc00::/7', 'fe80::/10'];

export function networkList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.trim().split('/');
    const family = isIPv4(net) ? 'ipv4' : isIPv6(net) ? 'ipv6' : undefined;
    if (!family) continue; // a malformed entry must not take the server down; it simply matches nothing
    const prefix = bits === undefined ? (family === 'ipv4' ? 32 : 128) : Number(bits);
    if (Number.isInteger(prefix)) list.addSubnet(net, prefix, family);
  }
  return list;
}

/** Strips the IPv4-mapped IPv6 prefix Node reports for IPv4 clients on dual-stack sockets. */
export function normaliseAddress(address: string): string {
  return address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
}

export function inNetworks(address: string | undefined, list: BlockList): boolean {
  if (!address) return false;
  const a = normaliseAddress(address);
  const family = isIPv4(a) ? 'ipv4' : isIPv6(a) ? 'ipv6' : undefined;
  return family !== undefined && list.check(a, family);
}

const lan = networkList(LAN_RANGES);

/** True when the address is outside the LAN ranges and the configured trusted subnets. */
export function isExternalAddress(address: string | undefined, trustedSubnets: readonly string[]): boolean {
  if (inNetworks(address, lan)) return false;
  return !(trustedSubnets.length > 0 && inNetworks(address, networkList(trustedSubnets)));
}
