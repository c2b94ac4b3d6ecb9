// A printer status source driven by the test (temperatures, terminal lines, state), and a push channel on its own
// HTTP server that uses it together with a real test server's access control, config and event bus.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import type { PrinterListener, PrinterStateSnapshot, TemperatureHistoryEntry } from '../../src/printer/types.ts';
import { stateFlags, STATE_TEXT, type ConnectionStateId } from '../../src/printer/printer-state.ts';
import type { PrinterStatusSource } from '../../src/push/sources.ts';
import { PushService } from '../../src/push/push-service.ts';
import type { PushServiceDeps } from '../../src/push/push-deps.ts';
import { systemClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { TestServer } from '../helpers/server.ts';

export class ScriptedPrinter implements PrinterStatusSource {
  private listeners = new Set<PrinterListener>();
  private id: ConnectionStateId = 'OPERATIONAL';
  private history: TemperatureHistoryEntry[] = [];

  state(): PrinterStateSnapshot {
    return { id: this.id, text: STATE_TEXT[this.id], flags: stateFlags(this.id, false), error: '' };
  }
  temperatureHistory(): TemperatureHistoryEntry[] { return [...this.history]; }
  offsets(): Record<string, number> { return {}; }
  currentZ(): number | null { return null; }
  resends() { return { count: 0, transmitted: 0, ratio: 0 }; }
  subscribe(l: PrinterListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  setState(id: ConnectionStateId): void {
    this.id = id;
    for (const l of this.listeners) l.state?.(this.state());
  }
  temperature(tool0: number, bed: number): void {
    const e: TemperatureHistoryEntry = { time: Math.floor(Date.now() / 1000), tool0: { actual: tool0, target: 210 }, bed: { actual: bed, target: 60 } };
    this.history.push(e);
    for (const l of this.listeners) l.temperature?.(e);
  }
  log(...lines: string[]): void {
    for (const l of this.listeners) l.log?.(lines);
  }
  /** Raw lines as the firmware sent them. */
  received(...lines: string[]): void {
    for (const l of this.listeners) l.messages?.(lines);
  }
}

export interface ScriptedPush {
  url: string;
  push: PushService;
  printer: ScriptedPrinter;
  http: Server;
}

export async function startScriptedPush(t: TestContext, server: TestServer, opts: Partial<PushServiceDeps> = {}): Promise<ScriptedPush> {
  const printer = new ScriptedPrinter();
  const push = new PushService({
    config: server.config.slice('server', 'temperature', 'api'), configHash: () => server.config.hash(), events: server.events, access: server.access, clock: systemClock, logger: silentLogger,
    printer, ...opts,
  });
  const http = createServer((_req, res) => { res.writeHead(404).end(); });
  push.attach(http);
  await push.start();
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  t.after(async () => {
    await push.stop();
    http.closeAllConnections();
    await new Promise<void>((r) => http.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, push, printer, http };
}
