// Flow control: which lines are in flight (awaiting their ok) and the strategies deciding whether one more may go.

/**
 * FIFO of lines sent and not yet acknowledged, as parallel ring arrays (no object per line). Each entry also keeps the
 * write turn (epoch) it left in: a reply read in the same turn was produced before the firmware could see that line,
 * so it cannot acknowledge it (see ProtocolEngine.handleOk).
 */
export class InFlight {
  private numbers: Int32Array;
  private bytes: Int32Array;
  private flags: Uint8Array;
  private epochs: Int32Array;
  private head = 0;
  private size = 0;
  totalBytes = 0;

  constructor(capacity = 256) {
    this.numbers = new Int32Array(capacity);
    this.bytes = new Int32Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.epochs = new Int32Array(capacity);
  }

  get count(): number {
    return this.size;
  }

  push(lineNumber: number, bytes: number, flags: number, epoch = 0): void {
    if (this.size === this.numbers.length) this.grow();
    const i = (this.head + this.size) % this.numbers.length;
    this.numbers[i] = lineNumber;
    this.bytes[i] = bytes;
    this.flags[i] = flags;
    this.epochs[i] = epoch;
    this.size++;
    this.totalBytes += bytes;
  }

  /** Removes the oldest entry; returns its flags, or -1 when empty. */
  shift(): number {
    if (this.size === 0) return -1;
    const i = this.head;
    this.totalBytes -= this.bytes[i];
    this.head = (i + 1) % this.numbers.length;
    this.size--;
    return this.flags[i];
  }

  /** Line number of the oldest entry (-1 unnumbered), or -2 when empty. */
  peekNumber(): number {
    return this.size === 0 ? -2 : this.numbers[this.head];
  }

  /** Write turn of the oldest entry, or -1 when empty. */
  peekEpoch(): number {
    return this.size === 0 ? -1 : this.epochs[this.head];
  }

  /** Flags of the oldest entry, or -1 when empty. */
  peekFlags(): number {
    return this.size === 0 ? -1 : this.flags[this.head];
  }

  /** Whether any entry in flight carries `flag`. */
  has(flag: number): boolean {
    for (let k = 0; k < this.size; k++) if ((this.flags[(this.head + k) % this.numbers.length] & flag) !== 0) return true;
    return false;
  }

  /** OR of all flags in flight (long-running, heating). */
  flagsInFlight(): number {
    let f = 0;
    for (let k = 0; k < this.size; k++) f |= this.flags[(this.head + k) % this.numbers.length];
    return f;
  }

  clear(): void {
    this.head = 0;
    this.size = 0;
    this.totalBytes = 0;
  }

  private grow(): void {
    const n = this.numbers.length * 2;
    const nn = new Int32Array(n), nb = new Int32Array(n), nf = new Uint8Array(n), ne = new Int32Array(n);
    for (let k = 0; k < this.size; k++) {
      const i = (this.head + k) % this.numbers.length;
      nn[k] = this.numbers[i];
      nb[k] = this.bytes[i];
      nf[k] = this.flags[i];
      ne[k] = this.epochs[i];
    }
    this.numbers = nn;
    this.bytes = nb;
    this.flags = nf;
    this.epochs = ne;
    this.head = 0;
  }
}

export const FLAG_LONG = 1;
export const FLAG_HEATING = 2;
/** An M105: its answer is `ok T:...`, which tells that reply apart from the plain oks of the lines before it. */
export const FLAG_TEMP_QUERY = 4;
/** The M105 sent after a communication timeout, outside the window, to learn whether an ok was lost. */
export const FLAG_PROBE = 8;

/** The settings a strategy may change to when the firmware tells more (settings.ts's names). */
export interface FlowSettings {
  advancedOk: boolean;
  rxBufferSize: number;
  maxLinesInFlight: number;
}

/** Decides whether a line of `bytes` (including the newline) may be written now. */
export interface FlowControl {
  readonly name: 'ping-pong' | 'send-ahead' | 'advanced-ok';
  canSend(inFlight: InFlight, bytes: number): boolean;
  /** Nothing more may go until the firmware replies (the transport may keep reading instead of sleeping). */
  awaitsReply(inFlight: InFlight): boolean;
  /** An ADVANCED_OK `B` value (free command slots) seen in an ok: the strategy from now on (itself, or another). */
  bufferFree(free: number, s: FlowSettings): FlowControl;
}

/** One line per ok: safe for every firmware, the default. An ok telling its free slots switches to AdvancedOkWindow. */
export class PingPong implements FlowControl {
  readonly name = 'ping-pong' as const;
  canSend(inFlight: InFlight): boolean {
    return inFlight.count === 0;
  }
  awaitsReply(inFlight: InFlight): boolean {
    return inFlight.count > 0;
  }
  bufferFree(free: number, s: FlowSettings): FlowControl {
    if (!s.advancedOk) return this;
    return new AdvancedOkWindow(s.rxBufferSize > 0 ? s.rxBufferSize : 127, s.maxLinesInFlight).bufferFree(free);
  }
}

/** Character counting: unacknowledged bytes never exceed the firmware's receive buffer. */
export class SendAhead implements FlowControl {
  readonly name = 'send-ahead' as const;
  constructor(private readonly rxBytes: number, private readonly maxLines: number) {}
  canSend(inFlight: InFlight, bytes: number): boolean {
    return inFlight.count === 0 || (inFlight.count < this.maxLines && inFlight.totalBytes + bytes <= this.rxBytes);
  }
  awaitsReply(_inFlight: InFlight): boolean {
    return false;
  }
  bufferFree(_free: number, _s: FlowSettings): FlowControl {
    return this;
  }
}

/**
 * ADVANCED_OK: the firmware tells its free command slots in every ok; the largest value seen is its queue size.
 * Lines in flight stay below that and within the byte budget (commands wait in the RX buffer until a slot frees).
 */
export class AdvancedOkWindow implements FlowControl {
  readonly name = 'advanced-ok' as const;
  private slots = 1;
  constructor(private readonly rxBytes: number, private readonly maxLines: number) {}
  bufferFree(free: number): FlowControl {
    if (free > this.slots) this.slots = Math.min(free, this.maxLines);
    return this;
  }
  awaitsReply(_inFlight: InFlight): boolean {
    return false;
  }
  canSend(inFlight: InFlight, bytes: number): boolean {
    if (inFlight.count === 0) return true;
    return inFlight.count < this.slots && inFlight.totalBytes + bytes <= this.rxBytes;
  }
}

/** Ring of the last numbered lines as sent, for resends. */
export class LineHistory {
  private readonly lines: string[];
  private readonly numbers: Int32Array;
  private newest = -1;
  constructor(readonly capacity: number) {
    this.lines = new Array<string>(capacity).fill('');
    this.numbers = new Int32Array(capacity).fill(-1);
  }
  add(lineNumber: number, wire: string): void {
    const i = lineNumber % this.capacity;
    this.lines[i] = wire;
    this.numbers[i] = lineNumber;
    this.newest = lineNumber;
  }
  get(lineNumber: number): string | undefined {
    if (lineNumber < 0 || lineNumber > this.newest) return undefined;
    const i = lineNumber % this.capacity;
    return this.numbers[i] === lineNumber ? this.lines[i] : undefined;
  }
  clear(): void {
    this.numbers.fill(-1);
    this.newest = -1;
  }
}
