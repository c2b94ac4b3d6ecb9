// Client address classification: which callers count as local (autologin) or external (login response flag).
// Addresses and subnets are parsed here rather than with node:net's BlockList/isIPv6: those cost ≈ 100 ms of CPU on
// their first use at start (node's IPv6 pattern is a very large regular expression) and more per request.

/** Private, loopback and link-local ranges: a client from here is not "external". */
const LAN_RANGES = ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '::1/128', 'fc00::/7', 'fe80::/10'];

interface Subnet { bytes: Uint8Array; prefix: number }
/**
 * Subnets over 16-byte addresses: IPv4 ones as IPv4-mapped IPv6 (a.b.c.d/n is ::ffff:a.b.c.d/96+n), so an IPv4
 * client reported as ::ffff:a.b.c.d and one reported as a.b.c.d are the same address (as for node's BlockList).
 */
export interface NetworkList { subnets: Subnet[] }

function parseV4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === '0') || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

function parseV6(text: string): Uint8Array | undefined {
  const zone = text.indexOf('%');
  const addr = zone >= 0 ? text.slice(0, zone) : text; // a link-local scope (fe80::1%eth0) does not change the address
  const halves = addr.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    const parts = s.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseV4(p);
        if (!v4) return undefined;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => { out[2 * i] = g >> 8; out[2 * i + 1] = g & 0xff; });
  return out;
}

/** The address as 16 bytes (IPv4 mapped into IPv6), or undefined when it is none. */
function parseAddress(text: string): { bytes: Uint8Array; v4: boolean } | undefined {
  if (text.includes(':')) {
    const bytes = parseV6(text);
    return bytes && { bytes, v4: false };
  }
  const v4 = parseV4(text);
  if (!v4) return undefined;
  const bytes = new Uint8Array(16);
  bytes[10] = bytes[11] = 0xff;
  bytes.set(v4, 12);
  return { bytes, v4: true };
}

function inSubnet(addr: Uint8Array, net: Subnet): boolean {
  let bits = net.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((addr[i] & mask) !== (net.bytes[i] & mask)) return false;
  }
  return true;
}

export function networkList(cidrs: readonly string[]): NetworkList {
  const list: NetworkList = { subnets: [] };
  for (const cidr of cidrs) {
    const [net, bits, extra] = cidr.trim().split('/');
    const addr = parseAddress(net);
    // A malformed entry must not take the server down; it simply matches nothing.
    if (!addr || extra !== undefined || !/^\d+$/.test(bits ?? '0')) continue;
    const width = addr.v4 ? 32 : 128;
    const prefix = bits === undefined ? width : Number(bits);
    if (prefix <= width) list.subnets.push({ bytes: addr.bytes, prefix: prefix + 128 - width });
  }
  return list;
}

/** Strips the IPv4-mapped IPv6 prefix Node reports for IPv4 clients on dual-stack sockets. */
export function normaliseAddress(address: string): string {
  return address.startsWith('::ffff:') && parseV4(address.slice(7)) ? address.slice(7) : address;
}

export function inNetworks(address: string | undefined, list: NetworkList): boolean {
  if (!address) return false;
  const addr = parseAddress(address);
  return addr !== undefined && list.subnets.some((net) => inSubnet(addr.bytes, net));
}

const lan = networkList(LAN_RANGES);

/** True when the address is outside the LAN ranges and the configured trusted subnets. */
export function isExternalAddress(address: string | undefined, trustedSubnets: readonly string[]): boolean {
  if (inNetworks(address, lan)) return false;
  return !(trustedSubnets.length > 0 && inNetworks(address, networkList(trustedSubnets)));
}
