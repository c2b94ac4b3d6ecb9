// The packet cap on the byte stream from the broker: small packets pass untouched whatever the chunking, an
// oversized PUBLISH becomes a stand-in with the same head, and a large packet of another type fails the stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oversizedPacket, PacketCap } from '../../src/mqtt/packet-cap.ts';

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

function publish(topic: string, payload: Buffer, opts: { qos?: number; id?: number; props?: Buffer } = {}): Buffer {
  const qos = opts.qos ?? 0;
  const t = Buffer.from(topic);
  const parts: Buffer[] = [Buffer.from([t.length >> 8, t.length & 255]), t];
  if (qos > 0) parts.push(Buffer.from([(opts.id ?? 1) >> 8, (opts.id ?? 1) & 255]));
  if (opts.props) parts.push(Buffer.from(varint(opts.props.length)), opts.props);
  parts.push(payload);
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([0x30 | (qos << 1), ...varint(body.length)]), body]);
}

/** Runs `input` through a cap in chunks of `size` and returns everything it put out. */
async function through(cap: PacketCap, input: Buffer, size: number): Promise<Buffer> {
  const out: Buffer[] = [];
  cap.on('data', (b: Buffer) => out.push(b));
  const ended = new Promise<void>((resolve, reject) => { cap.on('end', resolve); cap.on('error', reject); });
  for (let i = 0; i < input.length; i += size) cap.write(input.subarray(i, i + size));
  cap.end();
  await ended;
  return Buffer.concat(out);
}

test('PacketCap: packets within the cap pass byte for byte, however the stream is cut', async () => {
  const input = Buffer.concat([
    Buffer.from([0x20, 0x02, 0x00, 0x00]), // CONNACK
    publish('a/b', Buffer.from('{"x":1}')),
    publish('a/c', Buffer.alloc(1000, 'y'), { qos: 1, id: 7 }),
    Buffer.from([0xd0, 0x00]), // PINGRESP
    publish('a/d', Buffer.alloc(200, 'z'), { qos: 1, id: 9, props: Buffer.from([0x08, 0x00, 0x01, 0x72]) }),
  ]);
  for (const size of [1, 2, 3, 7, 64, input.length]) {
    assert.deepEqual(await through(new PacketCap(1000 + 16, 5), input, size), input, `chunks of ${size}`);
  }
});

test('PacketCap: an oversized PUBLISH becomes a stand-in with its topic, packet id and MQTT 5 properties', async () => {
  const props = Buffer.concat([Buffer.from([0x08, 0x00, 0x05]), Buffer.from('r/top'), Buffer.from([0x09, 0x00, 0x02, 0x41, 0x42])]);
  const big = publish('req/t', Buffer.alloc(50_000, 'x'), { qos: 1, id: 0x1234, props });
  const after = publish('a/b', Buffer.from('next'));
  for (const size of [1, 5, 999, 65_536]) {
    const cap = new PacketCap(10_000, 5);
    const out = await through(cap, Buffer.concat([big, after]), size);
    assert.ok(out.subarray(out.length - after.length).equals(after), 'the next packet follows untouched');
    const standIn = out.subarray(0, out.length - after.length);
    assert.equal(standIn[0], big[0], 'same type and flags');
    const len = standIn[1]!;
    assert.equal(standIn.length, 2 + len);
    const head = 2 + 5 + 2 + 1 + props.length;
    assert.deepEqual(standIn.subarray(2, 2 + head), big.subarray(4, 4 + head), 'topic, id and properties kept');
    assert.equal(oversizedPacket(standIn.subarray(2 + head)), big.length);
    assert.deepEqual(cap.stats, { skipped: 1, skippedBytes: big.length });
  }
  // MQTT 3.1: no properties; QoS 0: no packet id.
  const v3 = publish('req/t', Buffer.alloc(20_000, 'x'));
  const out = await through(new PacketCap(10_000, 3), v3, 4096);
  assert.deepEqual(out.subarray(2, 2 + 7), v3.subarray(4, 4 + 7));
  assert.equal(oversizedPacket(out.subarray(9)), v3.length);
});

test('PacketCap: a forged marker is not a stand-in; a large packet of another type fails the stream', async () => {
  assert.equal(oversizedPacket(Buffer.from('\0gantry-oversized:00000000000000000000000000000000:5')), undefined);
  assert.equal(oversizedPacket(Buffer.from('{}')), undefined);
  const suback = Buffer.concat([Buffer.from([0x90, ...varint(20_000)]), Buffer.alloc(20_000)]);
  await assert.rejects(through(new PacketCap(10_000, 4), suback, 4096), /over the 10000-byte cap/);
});
