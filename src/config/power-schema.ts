// Settings of power control: `plugins.psucontrol` with PSU Control's own keys and defaults (docs/reference/plugins.md
// §1.3), so an imported OctoPrint config and clients that read /api/settings keep working; Gantry's device providers
// (the plugin's PLUGIN switching/sensing) under `plugins.psucontrol.gantry`.
import { Type } from './typebox.ts';
import { bool, num, int, str, obj } from './schema-fields.ts';

const METHOD = (values: string[], def: string, description: string) =>
  Type.Union(values.map((v) => Type.Literal(v)), { default: def, description });

export const PowerDeviceSection = obj({
  kind: METHOD(['none', 'tasmota', 'shelly1', 'shelly2', 'kasa', 'homeassistant', 'mqtt', 'http', 'system'], 'none',
    'Device provider behind switchingMethod/sensingMethod PLUGIN'),
  address: str('', 'Device host[:port] (tasmota, shelly1, shelly2, kasa) or Home Assistant base URL (http://ha:8123)'),
  plug: int(0, 'Tasmota relay number (0 or 1 = POWER1), Kasa strip outlet (0 = the plug itself), Shelly relay/switch id (from 0)', { minimum: 0, maximum: 64 }),
  username: str('', 'User (Tasmota: query user=, Shelly Gen1: HTTP Basic); empty = no auth'),
  password: str('', 'Password'),
  token: str('', 'Home Assistant long-lived access token'),
  entityId: str('', 'Home Assistant entity (switch.x; without a dot, switch. is added)'),
  controlTopic: str('', 'MQTT topic the on/off payloads are published to'),
  stateTopic: str('', 'MQTT topic the device reports its state on (empty: the commanded state)'),
  onPayload: str('ON', 'MQTT payload that switches on'),
  offPayload: str('OFF', 'MQTT payload that switches off'),
  stateOn: str('ON', 'MQTT state payload meaning on (or a JSON object such as {"POWER":"ON"} for JSON states)'),
  stateOff: str('OFF', 'MQTT state payload meaning off'),
  onUrl: str('', 'http: URL requested to switch on'),
  offUrl: str('', 'http: URL requested to switch off'),
  stateUrl: str('', 'http: URL whose answer tells the state (empty: the commanded state)'),
  method: METHOD(['GET', 'POST', 'PUT'], 'GET', 'http: request method for on/off'),
  body: str('', 'http: request body for on/off ({state} becomes on or off)'),
  stateOnMatch: str('on', 'http: the state answer contains this text (case-insensitive) when on; for JSON, a dotted path=value such as output=true'),
  onCommand: str('', 'system: shell command that switches on'),
  offCommand: str('', 'system: shell command that switches off'),
  stateCommand: str('', 'system: shell command whose exit code tells the state (0 on, 1 off)'),
  timeout: num(5, 'Seconds a device has to answer', { minimum: 0.1, maximum: 120 }),
}, 'Gantry device provider');

export const PsuControlSection = obj({
  switchingMethod: METHOD(['GCODE', 'GPIO', 'SYSTEM', 'PLUGIN'], 'GCODE', 'How the PSU is switched'),
  onGCodeCommand: str('M80', 'G-code that switches on (GCODE switching; needs a connection)'),
  offGCodeCommand: str('M81', 'G-code that switches off'),
  onSysCommand: str('', 'Shell command that switches on (SYSTEM switching)'),
  offSysCommand: str('', 'Shell command that switches off'),
  switchingPlugin: str('', 'Provider id (PSU Control sub-plugin); Gantry uses gantry.kind'),
  sensingPlugin: str('', 'Provider id for sensing; Gantry uses gantry.kind'),
  GPIODevice: str('', 'GPIO chip device (e.g. /dev/gpiochip0) for GPIO switching/sensing'),
  onoffGPIOPin: int(0, 'GPIO line that switches', { minimum: 0 }),
  invertonoffGPIOPin: bool(false, 'The switching line is low for on'),
  sensingMethod: METHOD(['INTERNAL', 'GPIO', 'SYSTEM', 'PLUGIN'], 'INTERNAL', 'How the state is read back'),
  senseGPIOPin: int(0, 'GPIO line that senses', { minimum: 0 }),
  invertsenseGPIOPin: bool(false, 'The sensing line is low for on'),
  senseGPIOPinPUD: METHOD(['', 'PULL_UP', 'PULL_DOWN'], '', 'Bias of the sensing line'),
  senseSystemCommand: str('', 'Shell command: exit 0 = on, exit 1 = off'),
  sensePollingInterval: num(5, 'Seconds between state polls (and pushes)', { minimum: 0.1 }),
  enablePseudoOnOff: bool(false, 'M80/M81 sent to the printer switch the PSU (not with GCODE switching)'),
  pseudoOnGCodeCommand: str('M80', 'G-code that switches on when pseudo on/off is enabled'),
  pseudoOffGCodeCommand: str('M81', 'G-code that switches off when pseudo on/off is enabled'),
  postOnDelay: num(0, 'Seconds to wait after switching on', { minimum: 0 }),
  connectOnPowerOn: bool(false, 'Connect to the printer after switching on'),
  disconnectOnPowerOff: bool(false, 'Disconnect before switching off'),
  autoOn: bool(false, 'Switch on before connecting and before a print starts'),
  autoOnTriggerGCodeCommands: str('G0,G1,G2,G3,G10,G11,G28,G29,G32,M104,M106,M109,M140,M190', 'Commands that switch on with autoOn'),
  powerOffWhenIdle: bool(false, 'Switch off after idleTimeout minutes without a job and with every hotend cool'),
  idleTimeout: num(30, 'Idle minutes before switching off', { minimum: 0 }),
  idleIgnoreCommands: str('M105', 'Commands that do not count as activity'),
  idleTimeoutWaitTemp: num(50, 'Hotends must be at or below this (°C) before an idle off', { minimum: 0 }),
  turnOnWhenApiUploadPrint: bool(false, 'Switch on for an upload with print=true'),
  turnOffWhenError: bool(false, 'Switch off on an Error event'),
  enablePowerOffWarningDialog: bool(true, 'The UI asks before an off'),
  gantry: PowerDeviceSection,
});

/**
 * `plugins.DisplayLayerProgress`: present so clients see the plugin as installed (docs/reference/plugins.md §0.3); the
 * printer's own screen is Gantry's (`gantry`): M117 from a template and M73 progress, both off by default.
 */
export const LayerProgressSection = obj({
  layerOffset: int(0, 'Added to the layer numbers shown (the plugin\'s layerOffset)'),
  gantry: obj({
    m117: obj({
      enabled: bool(false, 'Send M117 with the template while printing'),
      template: str('L {layer}/{layers} - {progress}% - {left} left',
        'M117 text: {layer} {layers} {progress} {height} {totalHeight} {left} {file}; plain ASCII (the firmware\'s LCD charset)'),
      interval: num(30, 'At least this many seconds between two M117 (a changed text only)', { minimum: 1 }),
    }),
    m73: obj({
      enabled: bool(false, 'Send M73 P<percent> R<minutes left> while printing (Prusa, Marlin LCD_SET_PROGRESS_MANUALLY)'),
      interval: num(60, 'At least this many seconds between two M73 (a changed value only)', { minimum: 1 }),
    }),
  }),
});
