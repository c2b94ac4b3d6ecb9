// What the MQTT service reads from the rest of the host (narrow views main.ts wires) and the API dispatch contract.
import type { PrinterListener, PrinterStateSnapshot, ResendStats } from '../printer/types.ts';

export interface MqttPrinterSource {
  state(): PrinterStateSnapshot;
  currentZ(): number | null;
  offsets(): Record<string, number>;
  resends(): ResendStats;
  subscribe(listener: PrinterListener): () => void;
  watchReplies(watch: (line: string) => void): () => void;
  /** Heaters of the printer profile in use (Home Assistant sensors). */
  heaters(): { extruders: number; bed: boolean; chamber: boolean };
}

export interface MqttJobSource {
  job(): Record<string, unknown>;
  progress(): Record<string, unknown>;
}

/** The stored metadata of a file (display, hash, analysis, history, userdata…); null when there is none to read. */
export type FileMetadataSource = (origin: string, path: string) => Promise<Record<string, unknown> | null>;

export interface SlicingProgress {
  slicer: string;
  source_location: string;
  source_path: string;
  dest_location: string;
  dest_path: string;
  progress: number;
}

/** One API call over MQTT, executed by the HTTP layer's own routes (main.ts builds it from app.inject). */
export interface ApiCall {
  method: string;
  /** Path with optional query, starting with /api/. */
  path: string;
  body?: unknown;
  apikey?: string;
  /** Act as this user (Home Assistant commands); never reachable from an MQTT request. */
  asUser?: string;
}

export interface ApiResult {
  status: number;
  body: unknown;
  /** Binary bodies are sent as base64 text. */
  encoding?: 'base64';
}

export type ApiDispatch = (call: ApiCall) => Promise<ApiResult>;

/** How the parts hand messages to the connection: JSON for objects, raw for strings and buffers. */
export type Publish = (topic: string, payload: unknown, opts?: { retain?: boolean; qos?: 0 | 1; correlationData?: Buffer; response?: boolean }) => void;
