// What the MQTT service does, derived from config.yaml: broker URL and client options, topic names, flags. Pure.
import type { IClientOptions } from 'mqtt';
import type { Config } from '../config/schema.ts';

/** The settings sections MQTT reads (its config slice): a change to any of them may reshape the session. */
export type MqttSections = 'plugins' | 'server' | 'appearance' | 'webcam';

export interface MqttSettings {
  url: string;
  client: IClientOptions;
  tlsFiles: { ca?: string; cert?: string; key?: string };
  base: string;
  topics: {
    event(name: string): string | null;
    progress(kind: 'printing' | 'slicing'): string | null;
    temperature(heater: string): string | null;
    /** Null when metadata publishing is off. */
    metadata(key: string): string | null;
    lw: string | null;
    /** Sub topics without the base (Home Assistant's `~` templates use them). */
    hassSub(name: string): string;
    controlSub(name: string): string;
  };
  retain: boolean;
  lwRetain: boolean;
  stateQos: 0 | 1;
  queueSize: number;
  /** Largest packet (remaining length) read whole from the broker: a request of maxPayload plus topic and properties. */
  maxPacket: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  progressIntervalMs: number;
  tsField: string;
  eventClasses: Record<string, boolean>;
  threshold: number;
  /** `publish.metadataKeys` split: each a dot path into the printed file's metadata. */
  metadataKeys: string[];
  printerData: boolean;
  discovery: boolean;
  api: { enabled: boolean; maxPayload: number; concurrency: number };
  control: { enabled: boolean; user: string | null };
  ha: { uniqueId: string; nodeId: string; discoveryTopic: string; nodeName: string; manufacturer: string; model: string };
}

/** The per-host part of the default base topic: stable (kept in config.yaml) and unique, unlike a printer name. */
export function hostKey(uuid: string | null): string {
  return (uuid ?? 'unknown').replace(/-/g, '').slice(0, 12).toLowerCase();
}

const PROTOCOLS: Record<string, Pick<IClientOptions, 'protocolId' | 'protocolVersion'>> = {
  MQTTv31: { protocolId: 'MQIsdp', protocolVersion: 3 },
  MQTTv311: { protocolId: 'MQTT', protocolVersion: 4 },
  MQTTv5: { protocolId: 'MQTT', protocolVersion: 5 },
};

/** Room in a packet beyond its payload: a topic (up to 64 KiB) and MQTT 5 properties. */
const PACKET_HEAD_ALLOWANCE = 128 * 1024;

const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** A `{placeholder}` sub topic filled in, or null when the category is off (inactive flag or empty topic). */
function subTopic(base: string, template: string, active: boolean, value: string): string | null {
  if (!active || template === '') return null;
  return base + fillPlaceholder(template, value);
}

/** The first `{…}` of a topic template replaced by `value` (found by index: no expression to retry from each `{`). */
function fillPlaceholder(template: string, value: string): string {
  const open = template.indexOf('{');
  const close = open < 0 ? -1 : template.indexOf('}', open + 1);
  return close < 0 ? template : template.slice(0, open) + value + template.slice(close + 1);
}

/** The settings in effect, or null while no broker is configured (MQTT is off). */
export function mqttSettings(c: Pick<Config, MqttSections>): MqttSettings | null {
  const m = c.plugins.mqtt;
  const b = m.broker;
  const host = nonEmpty(b.url);
  if (!host) return null;
  const url = host.includes('://') ? host : `${b.tls_active ? 'mqtts' : 'mqtt'}://${host.includes(':') ? `[${host}]` : host}:${b.port}`;
  const base = m.publish.baseTopic ?? `gantry/${hostKey(c.server.uuid)}/`;
  const p = m.publish;
  const lw = subTopic(base, p.lwTopic, p.lwActive, '');
  const tls = b.tls as Record<string, unknown>;
  const client: IClientOptions = {
    ...PROTOCOLS[b.protocol],
    keepalive: b.keepalive,
    clean: b.clean_session,
    clientId: nonEmpty(m.client.client_id) ?? `gantry-${Math.random().toString(16).slice(2, 10)}`,
    ...(nonEmpty(b.username) ? { username: b.username as string, password: b.password ?? undefined } : {}),
    ...(lw ? { will: { topic: lw, payload: Buffer.from('disconnected'), qos: 1 as const, retain: b.lwRetain } } : {}),
    ...(nonEmpty(tls.ciphers) ? { ciphers: tls.ciphers as string } : {}),
    ...(b.tls_insecure ? { checkServerIdentity: () => undefined } : {}),
    rejectUnauthorized: true,
    // MQTT 5 lets the broker know what we accept: far larger than a request may be (those get a 413 answer), small
    // enough that nobody can make the host buffer a giant message.
    ...(b.protocol === 'MQTTv5' ? { properties: { maximumPacketSize: Math.max(16 * 1024 * 1024, m.gantry.api.maxPayload * 2) } } : {}),
  };
  const ha = c.plugins.homeassistant;
  const uuid = c.server.uuid ?? '00000000-0000-0000-0000-000000000000';
  const g = m.gantry;
  return {
    url,
    client,
    tlsFiles: { ca: nonEmpty(tls.ca_certs), cert: nonEmpty(tls.certfile), key: nonEmpty(tls.keyfile) },
    base,
    topics: {
      event: (name) => subTopic(base, p.eventTopic, p.eventActive, name),
      progress: (kind) => subTopic(base, p.progressTopic, p.progressActive, kind),
      temperature: (heater) => subTopic(base, p.temperatureTopic, p.temperatureActive, heater),
      metadata: (key) => subTopic(base, p.metadataTopic, p.metadataActive, key),
      lw,
      hassSub: (name) => fillPlaceholder(p.hassTopic, name),
      controlSub: (name) => fillPlaceholder(p.controlTopic, name),
    },
    retain: b.retain,
    lwRetain: b.lwRetain,
    stateQos: g.stateQos as 0 | 1,
    queueSize: g.queueSize,
    maxPacket: g.api.maxPayload + PACKET_HEAD_ALLOWANCE,
    reconnectMinMs: g.reconnectMin * 1000,
    reconnectMaxMs: Math.max(g.reconnectMax, g.reconnectMin) * 1000,
    progressIntervalMs: g.progressInterval * 1000,
    tsField: m.timestamp_fieldname,
    eventClasses: { ...p.events } as Record<string, boolean>,
    threshold: p.temperatureThreshold,
    metadataKeys: p.metadataKeys.split(',').map((k) => k.trim()).filter((k) => k !== ''),
    printerData: p.printerData,
    discovery: g.discovery,
    api: { enabled: g.api.enabled, maxPayload: g.api.maxPayload, concurrency: g.api.concurrency },
    control: { enabled: g.control.enabled, user: nonEmpty(g.control.user) ?? null },
    ha: {
      uniqueId: nonEmpty(ha.unique_id) ?? uuid,
      nodeId: nonEmpty(ha.node_id) ?? uuid.replace(/-/g, ''),
      discoveryTopic: ha.discovery_topic,
      nodeName: nonEmpty(ha.node_name) ?? (nonEmpty(c.appearance.name) || 'Gantry'),
      manufacturer: ha.device_manufacturer,
      model: ha.device_model,
    },
  };
}

const EVENT_CLASS: Record<string, string> = {};
for (const [cls, names] of Object.entries({
  server: ['Startup', 'Shutdown', 'ClientOpened', 'ClientClosed', 'ConnectivityChanged'],
  comm: ['Connecting', 'Connected', 'Disconnecting', 'Disconnected', 'Error', 'PrinterStateChanged'],
  files: ['Upload', 'FileAdded', 'FileRemoved', 'FolderAdded', 'FolderRemoved', 'UpdatedFiles', 'MetadataAnalysisStarted',
    'MetadataAnalysisFinished', 'FileSelected', 'FileDeselected', 'TransferStarted', 'TransferFailed', 'TransferDone'],
  printjob: ['PrintStarted', 'PrintFailed', 'PrintDone', 'PrintCancelled', 'PrintPaused', 'PrintResumed'],
  gcode: ['PowerOn', 'PowerOff', 'Home', 'Dwelling', 'Waiting', 'Cooling', 'Alert', 'Conveyor', 'Eject', 'EStop', 'ToolChange'],
  position: ['ZChange', 'PositionUpdate'],
  timelapse: ['CaptureStart', 'CaptureFailed', 'CaptureDone', 'MovieRendering', 'MovieFailed'],
  slicing: ['SlicingStarted', 'SlicingDone', 'SlicingCancelled', 'SlicingFailed', 'SlicingProfileAdded', 'SlicingProfileDeleted',
    'SlicingProfileModified'],
  settings: ['SettingsUpdated'],
})) for (const n of names) EVENT_CLASS[n] = cls;

/** OctoPrint-MQTT's event class of an event name (`publish.events.<class>` switches). */
export function eventClass(name: string): string {
  return EVENT_CLASS[name] ?? 'unclassified';
}
