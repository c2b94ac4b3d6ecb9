// The seam between the protocol engine and the wire: a transport moves whole lines, knows no G-code.
// Implementations: transports/serial-transport.ts (serialport), transports/loopback-transport.ts (virtual printer),
// and scripted transports in tests.

export interface LineTransportEvents {
  /** A line received from the firmware, without its line terminator. */
  line: (line: string) => void;
  /** The transport closed; `error` is set when it was not a requested close (cable pulled, firmware died). */
  close: (error?: Error) => void;
}

export interface LineTransport {
  /** Human-readable port name (`/dev/ttyUSB0`, `VIRTUAL`). */
  readonly name: string;
  open(): Promise<void>;
  /**
   * Writes one line; the transport appends `\n`. Resolves once the bytes are handed to the OS (or the simulator),
   * which is the back-pressure signal: the engine does not queue more than the transport accepted.
   */
  write(line: string): Promise<void>;
  /**
   * Optional streaming path: writes `text` (one or more lines, each already ending in `\n`) in one OS write, with no
   * promise per call; a failed write shows up as a close with the error. The engine streams through it when present:
   * it is what stands between a firmware's ok and the next line.
   */
  send?(text: string): void;
  /**
   * Optional hint after a turn's writes: the engine can send nothing more until the firmware replies (ping-pong while
   * printing), so the next line waits on how fast that reply is read.
   */
  awaitingReply?(): void;
  close(): Promise<void>;
  on<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void;
  off<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void;
  /** Change speed while open (baudrate detection); transports without a baudrate ignore it. */
  setBaudrate?(baudrate: number): Promise<void>;
}

/** Opens a transport for a port name and baudrate; main.ts supplies one that knows serial and VIRTUAL. */
export type TransportFactory = (port: string, baudrate: number) => LineTransport;
