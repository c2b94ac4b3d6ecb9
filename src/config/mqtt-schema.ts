// Settings of the MQTT service: `plugins.mqtt` with the OctoPrint-MQTT plugin's keys and defaults (plus Gantry's own
// under `plugins.mqtt.gantry`) and `plugins.homeassistant` with the HomeAssistant plugin's keys.
import { Type } from './typebox.ts';
import type { TSchema } from 'typebox';

const bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });
const num = (def: number, description: string, extra: object = {}) => Type.Number({ default: def, description, ...extra });
const int = (def: number, description: string, extra: object = {}) => Type.Integer({ default: def, description, ...extra });
const str = (def: string, description: string) => Type.String({ default: def, description });
const nstr = (description: string) => Type.Union([Type.String(), Type.Null()], { default: null, description });
const obj = <T extends Record<string, TSchema>>(props: T, description = '') =>
  Type.Object(props, { default: {}, description, additionalProperties: true });
const optStr = () => Type.Optional(Type.Union([Type.String(), Type.Null()]));

const EVENT_CLASSES = ['server', 'comm', 'files', 'printjob', 'gcode', 'position', 'timelapse', 'slicing', 'settings', 'unclassified'] as const;

export const MqttSection = obj({
  broker: obj({
    url: nstr('Broker host name or URL (mqtt://, mqtts://, ws://, wss://); unset: MQTT is off'),
    port: int(1883, 'Broker port (when url is a host name)', { minimum: 1, maximum: 65535 }),
    username: nstr('User name; credentials are sent only when it is set'),
    password: nstr('Password'),
    keepalive: int(60, 'Keepalive in seconds', { minimum: 0, maximum: 65535 }),
    tls_active: bool(false, 'Connect with TLS'),
    tls: Type.Object({
      ca_certs: optStr(), certfile: optStr(), keyfile: optStr(), ciphers: optStr(),
    }, { default: {}, additionalProperties: true, description: 'TLS files (PEM paths) and ciphers; empty values are ignored' }),
    tls_insecure: bool(false, 'Skip the host name check of the broker certificate (the chain is still checked)'),
    protocol: Type.Union([Type.Literal('MQTTv31'), Type.Literal('MQTTv311'), Type.Literal('MQTTv5')], {
      default: 'MQTTv31', description: 'MQTT protocol version',
    }),
    retain: bool(true, 'Default retain flag of state messages'),
    lwRetain: bool(true, 'Retain flag of the connected/disconnected (last will) messages'),
    clean_session: bool(true, 'Clean session (MQTT 5: clean start)'),
  }),
  client: obj({ client_id: nstr('Client id (unset: a random one per connection)') }),
  publish: obj({
    baseTopic: nstr('Prefix of every topic; unset: gantry/<installation id>/ so hosts never collide (OctoPrint: "octoPrint/")'),
    eventTopic: str('event/{event}', 'Event sub topic'),
    eventActive: bool(true, 'Publish events'),
    events: obj(Object.fromEntries(EVENT_CLASSES.map((c) => [c, bool(true, `Publish ${c} events`)])) as unknown as Record<typeof EVENT_CLASSES[number], ReturnType<typeof bool>>),
    progressTopic: str('progress/{progress}', 'Progress sub topic'),
    progressActive: bool(true, 'Publish progress'),
    printerData: bool(false, 'Add the printer data to print progress as printer_data'),
    temperatureTopic: str('temperature/{temp}', 'Temperature sub topic'),
    temperatureActive: bool(true, 'Publish temperatures'),
    temperatureThreshold: num(0.1, 'Smallest change of an actual temperature that is published again', { minimum: 0 }),
    metadataTopic: str('metadata/{key}', 'Metadata sub topic'),
    metadataActive: bool(false, 'Publish the printed file\'s metadata at print start (and clear it at the end)'),
    metadataKeys: str('', 'Metadata keys to publish: comma-separated, dot paths allowed (e.g. analysis.estimatedPrintTime)'),
    lwTopic: str('mqtt', 'Connection status and last will sub topic'),
    lwActive: bool(true, 'Publish the connection status and set the last will'),
    hassTopic: str('hass/{hass}', 'Home Assistant state sub topic'),
    controlTopic: str('hassControl/{control}', 'Home Assistant command sub topic'),
  }),
  timestamp_fieldname: str('_timestamp', 'Name of the timestamp field added to JSON payloads'),
  gantry: obj({
    stateQos: Type.Union([Type.Literal(0), Type.Literal(1)], { default: 0, description: 'QoS of state, event and discovery messages (the plugin: 0)' }),
    queueSize: int(1000, 'Messages kept while the broker is away (oldest dropped first; retained state is kept per topic)', { minimum: 0, maximum: 100000 }),
    reconnectMin: num(1, 'First reconnect delay in seconds (doubles up to reconnectMax)', { minimum: 0.05 }),
    reconnectMax: num(120, 'Longest reconnect delay in seconds', { minimum: 0.05 }),
    progressInterval: num(5, 'Seconds between print progress checks', { minimum: 0.1 }),
    discovery: bool(true, 'Publish Home Assistant discovery configs and state topics'),
    api: obj({
      enabled: bool(true, 'Answer API requests on <base>api/request (each request needs an API key)'),
      maxPayload: int(1024 * 1024 + 4096, 'Largest request message in bytes', { minimum: 1024 }),
      concurrency: int(8, 'API requests (and, apart, Home Assistant commands) handled at once; more are refused with 503', { minimum: 1, maximum: 256 }),
    }),
    control: obj({
      enabled: bool(false, 'Obey the Home Assistant hassControl/* command topics'),
      user: nstr('User whose permissions the commands have (required when enabled)'),
    }),
  }),
});

export const HomeAssistantSection = obj({
  unique_id: nstr('Device unique id (unset: the installation id)'),
  node_id: nstr('Discovery node id (unset: the installation id as 32 hex digits)'),
  discovery_topic: str('homeassistant', 'Home Assistant discovery prefix'),
  node_name: nstr('Device name (unset: the printer name, else "Gantry")'),
  device_manufacturer: str('Gantry', 'Device manufacturer shown in Home Assistant'),
  device_model: str('Gantry MQTT', 'Device model shown in Home Assistant'),
});
