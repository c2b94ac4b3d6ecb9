// Utility tests (path, url, server, resolution, address): parameter checking and the checks themselves. A test that
// could run always reports its outcome in `result`; only bad parameters are errors.
import { access, constants, mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import { lookup } from 'node:dns/promises';
import { createConnection } from 'node:net';
import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { domainToASCII } from 'node:url';
import { join, resolve } from 'node:path';
import { Type, Value } from '../config/typebox.ts';
import type { Static, TSchema } from 'typebox';
import { invalid } from '../core/errors.ts';
import { parseStatusSpec, urlTest, type UrlTestResult } from './url-test.ts';
import { lanSubnetOf, normaliseAddress, subnetToString } from './net-address.ts';

const Credentials = Type.Object({ username: Type.String(), password: Type.String() });

const PathParams = Type.Object({
  path: Type.String({ minLength: 1 }),
  check_type: Type.Optional(Type.Union([Type.Literal('file'), Type.Literal('dir'), Type.Null()])),
  check_access: Type.Optional(Type.Union([Type.Array(Type.Union([Type.Literal('r'), Type.Literal('w'), Type.Literal('x')])), Type.String({ pattern: '^[rwx]*$' }), Type.Null()])),
  allow_create_dir: Type.Optional(Type.Boolean()),
  check_writable_dir: Type.Optional(Type.Boolean()),
});
const UrlParams = Type.Object({
  url: Type.String({ minLength: 1 }),
  method: Type.Optional(Type.String({ pattern: '^[A-Za-z]+$' })),
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 300 })),
  validSsl: Type.Optional(Type.Boolean()),
  basicAuth: Type.Optional(Credentials),
  digestAuth: Type.Optional(Credentials),
  bearerAuth: Type.Optional(Type.String()),
  status: Type.Optional(Type.Unknown()),
  response: Type.Optional(Type.Union([Type.Literal(true), Type.Literal(false), Type.Literal('true'), Type.Literal('json'), Type.Literal('bytes')])),
  content_type_whitelist: Type.Optional(Type.Array(Type.String())),
  content_type_blacklist: Type.Optional(Type.Array(Type.String())),
});
const ServerParams = Type.Object({
  host: Type.String({ minLength: 1 }),
  port: Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.String({ pattern: '^[0-9]{1,5}$' })]),
  protocol: Type.Optional(Type.Union([Type.Literal('tcp'), Type.Literal('udp')])),
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 300 })),
});
const ResolutionParams = Type.Object({ name: Type.String({ minLength: 1 }) });
const AddressParams = Type.Object({ address: Type.Optional(Type.Union([Type.String(), Type.Null()])) });

function check<T extends TSchema>(schema: T, params: unknown): Static<T> {
  for (const e of Value.Errors(schema, params)) {
    const field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    throw invalid(field ? `Invalid parameter ${field}: ${e.message}` : 'Mandatory parameters missing');
  }
  return params as Static<T>;
}

export interface PathTestResult { path: string; exists: boolean; typeok: boolean; access: boolean; result: boolean }

export async function pathTest(raw: unknown): Promise<PathTestResult> {
  const p = check(PathParams, raw);
  const path = resolve(p.path === '~' || p.path.startsWith('~/') ? join(homedir(), p.path.slice(1)) : p.path);
  if (p.check_type === 'dir' && p.allow_create_dir) await mkdir(path, { recursive: true }).catch(() => {});
  const st = await stat(path).catch(() => undefined);
  const exists = st !== undefined;
  const typeok = !p.check_type || (p.check_type === 'file' ? !!st?.isFile() : !!st?.isDirectory());
  let accessOk = true;
  const wanted = typeof p.check_access === 'string' ? [...p.check_access] : (p.check_access ?? []);
  if (wanted.length > 0) {
    const mode = wanted.reduce((m, c) => m | (c === 'r' ? constants.R_OK : c === 'w' ? constants.W_OK : constants.X_OK), 0);
    accessOk = exists && await access(path, mode).then(() => true, () => false);
  }
  if (p.check_type === 'dir' && p.check_writable_dir && st?.isDirectory()) {
    // Permission bits can lie (read-only mounts, ACLs); writing a file is the only sure test.
    const balloon = join(path, '.testballoon.txt');
    try {
      await writeFile(balloon, 'Test');
      await unlink(balloon);
    } catch {
      accessOk = false;
    }
  }
  return { path, exists, typeok, access: accessOk, result: exists && typeok && accessOk };
}

export async function runUrlTest(raw: unknown): Promise<UrlTestResult> {
  const p = check(UrlParams, raw);
  const response = p.response === undefined || p.response === false ? undefined : p.response === 'json' ? 'json' : 'bytes';
  return urlTest({
    url: p.url,
    method: p.method ?? 'HEAD',
    timeoutMs: (p.timeout ?? 3) * 1000,
    validSsl: p.validSsl ?? true,
    basicAuth: p.basicAuth,
    digestAuth: p.digestAuth,
    bearerAuth: p.bearerAuth,
    status: parseStatusSpec(p.status),
    response,
    contentTypeWhitelist: p.content_type_whitelist,
    contentTypeBlacklist: p.content_type_blacklist,
  });
}

export interface ServerTestResult { host: string; port: number; protocol: 'tcp' | 'udp'; result: boolean }

export async function serverTest(raw: unknown): Promise<ServerTestResult> {
  const p = check(ServerParams, raw);
  const port = Number(p.port);
  if (port < 1 || port > 65535) throw invalid('Invalid parameter port: must be 1 to 65535');
  const protocol = p.protocol ?? 'tcp';
  const timeoutMs = (p.timeout ?? 3.05) * 1000;
  const result = protocol === 'tcp' ? await tcpReachable(p.host, port, timeoutMs) : await udpReachable(p.host, port, timeoutMs);
  return { host: p.host, port, protocol, result };
}

function tcpReachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host, port });
    const finish = (ok: boolean) => { clearTimeout(timer); socket.destroy(); done(ok); };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/**
 * UDP has no handshake: a datagram is sent and the target counts as reachable unless the network answers "port
 * unreachable" (or the name does not resolve) before the timeout. A reply from the target ends the wait early.
 */
async function udpReachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
  let address: string;
  let family: number;
  try {
    ({ address, family } = await lookup(host));
  } catch {
    return false;
  }
  return new Promise((done) => {
    const socket = createSocket(family === 6 ? 'udp6' : 'udp4');
    let settled = false;
    const finish = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      done(ok);
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('error', () => finish(false));
    socket.on('message', () => finish(true));
    socket.connect(port, address, () => {
      socket.send(Buffer.alloc(0), (err) => { if (err) finish(false); });
    });
  });
}

export async function resolutionTest(raw: unknown): Promise<{ name: string; result: boolean }> {
  const p = check(ResolutionParams, raw);
  // A name that cannot be a host name cannot resolve; no need to ask the network.
  const valid = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$/i.test(domainToASCII(p.name)) || isIP(p.name) !== 0;
  const result = valid && await lookup(p.name).then(() => true, () => false);
  return { name: p.name, result };
}

export interface AddressTestResult { address: string; is_lan_address: boolean; subnet?: string }

export function addressTest(raw: unknown, clientAddress: string): AddressTestResult {
  const p = check(AddressParams, raw);
  const address = normaliseAddress(p.address || clientAddress);
  if (!isIP(address)) throw invalid(`Invalid address: ${address}`);
  const subnet = lanSubnetOf(address);
  return subnet ? { address, is_lan_address: true, subnet: subnetToString(subnet) } : { address, is_lan_address: false };
}

export const UTIL_TEST_COMMANDS = ['path', 'url', 'server', 'resolution', 'address'] as const;
export type UtilTestCommand = (typeof UTIL_TEST_COMMANDS)[number];

export async function runUtilTest(command: string, params: Record<string, unknown>, clientAddress: string): Promise<object> {
  switch (command) {
    case 'path': return pathTest(params);
    case 'url': return runUrlTest(params);
    case 'server': return serverTest(params);
    case 'resolution': return resolutionTest(params);
    case 'address': return addressTest(params, clientAddress);
    default: throw invalid('command is invalid');
  }
}
