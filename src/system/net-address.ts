// IP address arithmetic for the address test: is an address inside one of this machine's own networks, and which (CIDR).
import { isIPv4, isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';

interface Parsed { v: 4 | 6; value: bigint }

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is treated as the IPv4 address it carries. */
export function normaliseAddress(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '');
  const zone = bare.indexOf('%');
  const a = zone < 0 ? bare : bare.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return mapped ? mapped[1] : a;
}

export function parseAddress(address: string): Parsed | undefined {
  const a = normaliseAddress(address);
  if (isIPv4(a)) return { v: 4, value: a.split('.').reduce((acc, o) => (acc << 8n) + BigInt(Number(o)), 0n) };
  if (!isIPv6(a)) return undefined;
  const [head, tail]: [string, string | undefined] = a.includes('::') ? [a.split('::')[0], a.split('::').slice(1).join('::')] : [a, undefined];
  if (a.split('::').length > 2) return undefined;
  const expandV4 = (groups: string[]) => groups.flatMap((g) => {
    if (!isIPv4(g)) return [g];
    const o = g.split('.').map(Number);
    return [((o[0] << 8) | o[1]).toString(16), ((o[2] << 8) | o[3]).toString(16)];
  });
  const h = head ? expandV4(head.split(':')) : [];
  const t = tail ? expandV4(tail.split(':')) : [];
  if (tail === undefined && h.length !== 8) return undefined;
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return { v: 6, value: groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g || '0', 16)), 0n) };
}

function format(v: 4 | 6, value: bigint): string {
  if (v === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((value >> BigInt(i * 16)) & 0xffffn).toString(16));
  // Compress the longest run of zero groups, as addresses are usually written.
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) { best = i; bestLen = j - i; }
    i = j;
  }
  if (best === -1) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

export interface Subnet { v: 4 | 6; network: bigint; prefix: number }

export function parseCidr(cidr: string): Subnet | undefined {
  const [addr, len] = cidr.split('/');
  const p = parseAddress(addr);
  if (!p) return undefined;
  const bits = p.v === 4 ? 32 : 128;
  const prefix = len === undefined ? bits : Number(len);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return undefined;
  return { v: p.v, network: p.value & mask(p.v, prefix), prefix };
}

function mask(v: 4 | 6, prefix: number): bigint {
  const bits = BigInt(v === 4 ? 32 : 128);
  return ((1n << bits) - 1n) ^ ((1n << (bits - BigInt(prefix))) - 1n);
}

export function subnetToString(s: Subnet): string {
  return `${format(s.v, s.network)}/${s.prefix}`;
}

export function contains(s: Subnet, address: string): boolean {
  const p = parseAddress(address);
  return !!p && p.v === s.v && (p.value & mask(s.v, s.prefix)) === s.network;
}

/** The networks of this machine's interfaces (loopback included), from the OS. */
export function localSubnets(): Subnet[] {
  const out: Subnet[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const ni of list ?? []) {
      const s = ni.cidr ? parseCidr(ni.cidr.replace(/%[^/]*/, '')) : undefined;
      if (s) out.push(s);
    }
  }
  return out;
}

/** The most specific local network containing `address`, or undefined when it is not on a LAN of this machine. */
export function lanSubnetOf(address: string, subnets: Subnet[] = localSubnets()): Subnet | undefined {
  return subnets.filter((s) => contains(s, address)).sort((a, b) => b.prefix - a.prefix)[0];
}
