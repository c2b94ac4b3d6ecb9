// Home Assistant MQTT discovery configs in OctoPrint-HomeAssistant's shape (abbreviated keys, `~` = base topic,
// the same `<node_id>_<SUFFIX>` unique ids), so existing Home Assistant entities keep their ids. Pure.
import type { MqttSettings } from './settings.ts';

export interface DiscoveryMessage { topic: string; payload: Record<string, unknown> }

export interface DiscoveryInputs {
  heaters: { extruders: number; bed: boolean; chamber: boolean };
  /** A snapshot URL is configured (camera entities). */
  camera: boolean;
  version: string;
}

type Avty = Record<string, string>;

export function discoveryMessages(s: MqttSettings, inputs: DiscoveryInputs): DiscoveryMessage[] {
  const { ha } = s;
  const node = ha.nodeId;
  const hass = (n: string) => `~${s.topics.hassSub(n)}`;
  const control = (n: string) => `~${s.topics.controlSub(n)}`;
  const sub = (full: string | null, fallback: string) => (full ?? s.base + fallback).slice(s.base.length);
  const eventAny = `~${sub(s.topics.event('+'), 'event/+')}`;
  const progress = (k: 'printing' | 'slicing') => `~${sub(s.topics.progress(k), `progress/${k}`)}`;
  const temp = (h: string) => `~${sub(s.topics.temperature(h), `temperature/${h}`)}`;
  const online: Avty[] = s.topics.lw ? [{ t: `~${sub(s.topics.lw, 'mqtt')}`, pl_avail: 'connected', pl_not_avail: 'disconnected' }] : [];
  const device = { ids: node, name: ha.nodeName, mf: ha.manufacturer, mdl: ha.model, sw: `Gantry ${inputs.version}` };
  const whilePrinting: Avty = { t: hass('is_printing'), pl_avail: 'True', pl_not_avail: 'False' };
  const truthy = (field: string): Avty => ({ t: hass('printing'), val_tpl: `{{'False' if not value_json.progress.${field} else 'True'}}`,
    pl_avail: 'True', pl_not_avail: 'False' });

  const out: DiscoveryMessage[] = [];
  const entity = (component: string, suffix: string, name: string, values: Record<string, unknown>, opts: { avty?: Avty[]; ic?: string } = {}) => {
    const id = `${node}_${suffix}`;
    out.push({
      topic: `${ha.discoveryTopic}/${component}/${id}/config`,
      payload: { avty: [...(opts.avty ?? []), ...online], '~': s.base, name, uniq_id: id, ...values, device, ...(opts.ic ? { ic: opts.ic } : {}) },
    });
  };

  entity('binary_sensor', 'CONNECTED', 'Connected', { stat_t: hass('Connected'), pl_on: 'Connected', pl_off: 'Disconnected', dev_cla: 'connectivity' });
  entity('binary_sensor', 'PRINTING', 'Printing', { stat_t: hass('printing'), pl_on: 'True', pl_off: 'False',
    val_tpl: '{{value_json.state.flags.printing}}' }, { ic: 'mdi:printer-3d' });
  entity('sensor', 'EVENT', 'Last event', { stat_t: eventAny, val_tpl: '{{value_json._event}}' }, { ic: 'mdi:calendar-star' });
  entity('sensor', 'PRINTING_S', 'Print status', { json_attr_t: hass('printing'), json_attr_tpl: '{{value_json.state|tojson}}',
    stat_t: hass('printing'), val_tpl: '{{value_json.state.text}}' }, { ic: 'mdi:printer-3d' });
  entity('sensor', 'PRINTING_P', 'Print progress', { json_attr_t: hass('printing'), json_attr_tpl: '{{value_json.progress|tojson}}',
    stat_t: progress('printing'), unit_of_meas: '%', val_tpl: '{{value_json.progress|float(0)}}' });
  entity('sensor', 'PRINTING_F', 'Print file', { stat_t: progress('printing'), val_tpl: '{{value_json.path}}' }, { ic: 'mdi:file' });
  entity('sensor', 'PRINTING_T', 'Print time', { stat_t: hass('printing'), val_tpl: '{{value_json.progress.printTime}}',
    dev_cla: 'duration', unit_of_meas: 's' }, { avty: [truthy('printTime')], ic: 'mdi:clock-start' });
  entity('sensor', 'PRINTING_E', 'Print time left', { stat_t: hass('printing'), val_tpl: '{{value_json.progress.printTimeLeft}}',
    dev_cla: 'duration', unit_of_meas: 's' }, { avty: [truthy('printTimeLeft')], ic: 'mdi:clock-end' });
  entity('sensor', 'PRINTING_ETA', 'Approximate total print time', { json_attr_t: hass('printing'), json_attr_tpl: '{{value_json.job|tojson}}',
    stat_t: hass('printing'), val_tpl: '{{value_json.job.estimatedPrintTime}}', dev_cla: 'duration', unit_of_meas: 's' },
  { avty: [{ ...truthy('printTimeLeft'), val_tpl: "{{'False' if not value_json.job.estimatedPrintTime else 'True'}}" }], ic: 'mdi:clock-outline' });
  entity('sensor', 'PRINTING_C', 'Approximate completion time', { stat_t: hass('printing'),
    val_tpl: '{{(now() + timedelta(seconds=value_json.progress.printTimeLeft|int(0))).isoformat()}}', dev_cla: 'timestamp' },
  { avty: [truthy('printTimeLeft')], ic: 'mdi:calendar-clock' });
  entity('sensor', 'PRINTING_Z', 'Current Z', { stat_t: hass('printing'), unit_of_meas: 'mm', val_tpl: '{{value_json.currentZ|float(0)}}' },
    { ic: 'mdi:axis-z-arrow' });
  entity('sensor', 'SLICING_P', 'Slicing progress', { stat_t: progress('slicing'), unit_of_meas: '%', val_tpl: '{{value_json.progress|float(0)}}' });
  entity('sensor', 'SLICING_F', 'Slicing file', { stat_t: progress('slicing'), val_tpl: '{{value_json.source_path}}' }, { ic: 'mdi:file' });

  const heater = (key: string, suffix: string, label: string) => {
    entity('sensor', suffix, `${label} temperature`, { stat_t: temp(key), unit_of_meas: '°C', val_tpl: '{{value_json.actual|float(0)}}',
      dev_cla: 'temperature' }, { ic: 'mdi:thermometer' });
    entity('sensor', `${suffix}_TARGET`, `${label} target`, { stat_t: temp(key), unit_of_meas: '°C', val_tpl: '{{value_json.target|float(0)}}',
      dev_cla: 'temperature' }, { ic: 'mdi:thermometer' });
  };
  for (let i = 0; i < inputs.heaters.extruders; i++) heater(`tool${i}`, `TOOL${i}`, `Tool ${i}`);
  if (inputs.heaters.bed) heater('bed', 'BED', 'Bed');
  if (inputs.heaters.chamber) heater('chamber', 'CHAMBER', 'Chamber');
  entity('sensor', 'SOC', 'SoC temperature', { stat_t: temp('soc'), unit_of_meas: '°C', val_tpl: '{{value_json.temperature|float(0)|round(1)}}',
    dev_cla: 'temperature' }, { ic: 'mdi:thermometer' });

  entity('switch', 'CONNECT', 'Connect to printer', { cmd_t: control('connect'), stat_t: `${s.base}${s.topics.hassSub('Connected')}`,
    pl_on: 'True', pl_off: 'False', stat_on: 'Connected', stat_off: 'Disconnected' }, { ic: 'mdi:lan-connect' });
  // Power control (src/power/, PSU Control's API): its state from the event it fires on every change.
  entity('switch', 'PSU', 'Printer power', { cmd_t: control('psu'),
    stat_t: `~${sub(s.topics.event('plugin_psucontrol_psu_state_changed'), 'event/plugin_psucontrol_psu_state_changed')}`,
    val_tpl: '{{value_json.isPSUOn}}', pl_on: 'True', pl_off: 'False', stat_on: 'True', stat_off: 'False' }, { ic: 'mdi:power-plug' });
  entity('button', 'STOP', 'Emergency stop', { cmd_t: control('stop') }, { ic: 'mdi:alert-octagon' });
  entity('button', 'CANCEL', 'Cancel print', { cmd_t: control('cancel') }, { avty: [whilePrinting], ic: 'mdi:cancel' });
  entity('switch', 'PAUSE', 'Pause print', { cmd_t: control('pause'), stat_t: hass('is_paused'), pl_off: 'False', pl_on: 'True' },
    { avty: [whilePrinting], ic: 'mdi:pause' });
  entity('button', 'SHUTDOWN', 'Shutdown system', { cmd_t: control('shutdown') }, { ic: 'mdi:power' });
  entity('button', 'REBOOT', 'Reboot system', { cmd_t: control('reboot') }, { ic: 'mdi:restart' });
  entity('button', 'RESTART', 'Restart server', { cmd_t: control('restart') }, { ic: 'mdi:restart-alert' });
  if (inputs.camera) {
    entity('switch', 'CAMERA_SNAPSHOT', 'Camera snapshot', { cmd_t: control('camera_snapshot'), stat_t: control('camera_snapshot'),
      val_tpl: '{{False}}' }, { ic: 'mdi:camera-iris' });
    // Not in the plugin's set: the camera entity itself, so the image shows without a hand-written camera config.
    entity('camera', 'CAMERA', 'Camera', { t: '~camera' }, { ic: 'mdi:camera' });
  }
  return out;
}
