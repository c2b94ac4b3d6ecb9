// The device provider for `plugins.psucontrol.gantry.kind` (PSU Control's PLUGIN switching and sensing).
import type { PowerDeviceSettings } from './settings.ts';
import type { PowerProvider } from './provider.ts';
import { tasmota } from './tasmota.ts';
import { shellyGen1, shellyGen2 } from './shelly.ts';
import { kasa } from './kasa.ts';
import { homeAssistant } from './home-assistant.ts';
import { mqttTopics, type PowerMqtt } from './mqtt-topics.ts';
import { httpRequest } from './http-request.ts';
import { systemCommands } from './system-command.ts';

export function createProvider(s: PowerDeviceSettings, mqtt: PowerMqtt | undefined): PowerProvider | null {
  switch (s.kind) {
    case 'tasmota': return tasmota(s);
    case 'shelly1': return shellyGen1(s);
    case 'shelly2': return shellyGen2(s);
    case 'kasa': return kasa(s);
    case 'homeassistant': return homeAssistant(s);
    case 'mqtt': return mqttTopics(s, mqtt);
    case 'http': return httpRequest(s);
    case 'system': return systemCommands(s.onCommand, s.offCommand, s.stateCommand, s.timeout);
    default: return null;
  }
}
