// The size cap on what the broker sends, applied to the byte stream before MQTT.js's parser (which buffers a packet
// whole before anyone sees it): an oversized PUBLISH is skipped as it streams in and handed on as a small stand-in.
import { randomBytes } from 'node:crypto';
import { Transform, type Duplex, type TransformCallback } from 'node:stream';
import { collectYoungGarbage } from '../core/gc.ts';

/** PUBLISH is the only packet a broker sends that can be large (MQTT control packet type 3). */
const PUBLISH = 3;
/** Topic (2 + 65,535 bytes), packet id, and up to 64 KiB of MQTT 5 properties: kept for the stand-in when they fit. */
const HEAD_LIMIT = 2 + 65_535 + 2 + 4 + 64 * 1024;

/**
 * The stand-in's payload starts with this: random per process, so no publisher can forge it. What follows is the
 * size of the skipped packet.
 */
const MARKER = Buffer.from(`\0gantry-oversized:${randomBytes(16).toString('hex')}:`);

/** The size of the skipped packet when `payload` is a stand-in, else undefined. */
export function oversizedPacket(payload: Buffer): number | undefined {
  if (payload.length <= MARKER.length || payload.length > MARKER.length + 16 || !payload.subarray(0, MARKER.length).equals(MARKER)) return undefined;
  return Number(payload.subarray(MARKER.length).toString('latin1'));
}

function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}

/** A variable byte integer at `at`: its value and length, null while incomplete, undefined when malformed. */
function readVarint(buf: Buffer, at: number): { value: number; bytes: number } | null | undefined {
  let value = 0;
  for (let i = 0; i < 4; i++) {
    if (at + i >= buf.length) return null;
    const b = buf[at + i]!;
    value += (b & 0x7f) * 128 ** i;
    if ((b & 0x80) === 0) return { value, bytes: i + 1 };
  }
  return undefined;
}

type State =
  | { kind: 'header'; bytes: number[] }
  | { kind: 'pass'; left: number }
  | { kind: 'head'; first: number; length: number; head: Buffer[]; got: number }
  | { kind: 'skip'; left: number; dropped: number; standIn: Buffer };

/**
 * Passes MQTT packets through untouched (chunks are forwarded, never copied or joined) except a PUBLISH whose
 * remaining length exceeds `maxPacket`: of that only the head (topic, packet id, MQTT 5 properties) is kept, the
 * payload is dropped as it arrives, and the parser then gets the same PUBLISH with the stand-in payload — so a QoS 1
 * message is still acknowledged, the connection stays up and the bridge can answer 413. A large packet of any other
 * type is a broken broker: the stream fails and the connection is rebuilt.
 */
export class PacketCap extends Transform {
  private state: State = { kind: 'header', bytes: [] };
  readonly stats = { skipped: 0, skippedBytes: 0 };

  /** `gate`: a promise while reading must wait (too many answers queued); the socket then stops being read. */
  constructor(private readonly maxPacket: number, private readonly protocolVersion: number,
    private readonly gate?: () => Promise<void> | undefined) {
    super();
  }

  override _transform(chunk: Buffer, enc: BufferEncoding, done: TransformCallback): void {
    const wait = this.gate?.();
    if (wait) return void wait.then(() => this._transform(chunk, enc, done));
    let at = 0;
    while (at < chunk.length) {
      const s = this.state;
      if (s.kind === 'pass') {
        const n = Math.min(s.left, chunk.length - at);
        this.push(at === 0 && n === chunk.length ? chunk : chunk.subarray(at, at + n));
        at += n;
        s.left -= n;
        if (s.left === 0) this.state = { kind: 'header', bytes: [] };
      } else if (s.kind === 'header') {
        s.bytes.push(chunk[at++]!);
        if (s.bytes.length < 2) continue;
        const len = readVarint(Buffer.from(s.bytes), 1);
        if (len === null) continue;
        if (len === undefined) return done(new Error('MQTT: malformed packet length from the broker'));
        const first = s.bytes[0]!;
        if (len.value <= this.maxPacket) {
          this.push(Buffer.from(s.bytes));
          this.state = len.value === 0 ? { kind: 'header', bytes: [] } : { kind: 'pass', left: len.value };
        } else if (first >> 4 !== PUBLISH) {
          return done(new Error(`MQTT: a ${len.value}-byte packet of type ${first >> 4} from the broker, over the ${this.maxPacket}-byte cap`));
        } else {
          this.state = { kind: 'head', first, length: len.value, head: [], got: 0 };
        }
      } else if (s.kind === 'head') {
        const n = Math.min(s.length - s.got, HEAD_LIMIT - s.got, chunk.length - at);
        s.head.push(chunk.subarray(at, at + n));
        s.got += n;
        at += n;
        const standIn = this.standIn(s);
        if (standIn) this.state = { kind: 'skip', left: s.length - s.got, dropped: 0, standIn };
      } else {
        const n = Math.min(s.left, chunk.length - at);
        at += n;
        s.left -= n;
        // The chunks skipped so far are garbage already: freed every 256 KB before they pile up (core/gc.ts), or a
        // 200 MB message left the process that much bigger until V8 got round to it.
        if (s.dropped >>> 18 !== (s.dropped + n) >>> 18) collectYoungGarbage();
        s.dropped += n;
      }
      const now = this.state;
      if (now.kind === 'skip' && now.left === 0) this.finishSkip(now.standIn);
    }
    done();
  }

  private finishSkip(standIn: Buffer): void {
    this.push(standIn);
    this.state = { kind: 'header', bytes: [] };
  }

  /** The stand-in packet once enough of the head is in (undefined while more is needed). */
  private standIn(s: Extract<State, { kind: 'head' }>): Buffer | undefined {
    const head = s.head.length === 1 ? s.head[0]! : Buffer.concat(s.head);
    s.head = [head];
    // Nothing more will come for the head: the stand-in is made from what there is.
    const last = s.got >= HEAD_LIMIT || s.got >= s.length;
    const qos = (s.first >> 1) & 3;
    const idEnd = head.length < 2 ? Number.POSITIVE_INFINITY : 2 + head.readUInt16BE(0) + (qos > 0 ? 2 : 0);
    if (idEnd > head.length) {
      if (!last) return undefined;
      // Not even a topic: a broken packet, which MQTT.js's parser then refuses (and the connection is rebuilt).
      return this.frame(s, Buffer.from([0, 0]));
    }
    if (this.protocolVersion !== 5) return this.frame(s, head.subarray(0, idEnd));
    const props = readVarint(head, idEnd);
    const propsEnd = props ? idEnd + props.bytes + props.value : undefined;
    if (propsEnd !== undefined && propsEnd <= head.length) return this.frame(s, head.subarray(0, propsEnd));
    if (!last && (props === null || (propsEnd !== undefined && propsEnd <= HEAD_LIMIT))) return undefined;
    // Properties larger than the head may hold (or malformed): the stand-in goes without them.
    return this.frame(s, Buffer.concat([head.subarray(0, idEnd), Buffer.from([0])]));
  }

  private frame(s: Extract<State, { kind: 'head' }>, variable: Buffer): Buffer {
    const total = 1 + varint(s.length).length + s.length;
    this.stats.skipped++;
    this.stats.skippedBytes += total;
    const body = Buffer.concat([variable, MARKER, Buffer.from(String(total), 'latin1')]);
    return Buffer.concat([Buffer.from([s.first]), varint(body.length), body]);
  }
}

/**
 * Puts a PacketCap between `stream` (the broker connection MQTT.js built) and whatever MQTT.js pipes it into. Writes,
 * `writableLength`, events and `destroy()` stay the stream's own; only what is read goes through the cap.
 */
export function capIncoming<S extends Duplex>(stream: S, cap: PacketCap): S {
  const pipe = stream.pipe.bind(stream);
  cap.on('error', (err) => stream.destroy(err));
  stream.pipe = ((dest: NodeJS.WritableStream, opts?: { end?: boolean }) => {
    pipe(cap);
    return cap.pipe(dest, opts);
  }) as S['pipe'];
  return stream;
}
