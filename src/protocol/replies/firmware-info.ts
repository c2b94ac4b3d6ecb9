// M115 reply parser: firmware name/data line and `Cap:` capability lines.
// Sample lines:
//   FIRMWARE_NAME:Marlin 2.1.2 (Jun 1 2023 12:00:00) SOURCE_CODE_URL:github.com/MarlinFirmware/Marlin PROTOCOL_VERSION:1.0 MACHINE_TYPE:Ender-3 EXTRUDER_COUNT:1 UUID:cede2a2f-41a2-4748-9b12-c55c62f367ff
//   FIRMWARE_NAME:Prusa-Firmware 3.13.0 based on Marlin FIRMWARE_URL:https://github.com/prusa3d/Prusa-Firmware PROTOCOL_VERSION:1.0 MACHINE_TYPE:Prusa i3 MK3S EXTRUDER_COUNT:1
//   FIRMWARE_NAME: RepRapFirmware for Duet 3 MB6HC FIRMWARE_VERSION: 3.4.5 ELECTRONICS: Duet 3 FIRMWARE_DATE: 2022-11-30
//   FIRMWARE_NAME:Klipper FIRMWARE_VERSION:v0.12.0-85-gd785b396
//   NAME: Malyan VER: 2.9 MODEL: M200 HW: HA02
//   Cap:AUTOREPORT_TEMP:1
//   Cap:EMERGENCY_PARSER:0

export interface FirmwareInfo {
  name: string;
  data: Record<string, string>;
}

// A key starts the line or follows white space, looked for behind it: matched from each space of a run instead, a run
// of 16 K spaces took a second.
const KEY = /(?<!\S)([A-Z][A-Z0-9_]*):/g;

export function isFirmwareLine(line: string): boolean {
  return line.includes('NAME:') || line.startsWith('NAME.');
}

/** Key/value pairs of an M115 line; the value runs to the next key and is trimmed. */
export function parseFirmwareLine(line: string): FirmwareInfo | null {
  if (!isFirmwareLine(line)) return null;
  const text = line.startsWith('NAME.') ? 'NAME:' + line.slice(5) : line;
  const keys: Array<{ key: string; start: number; valueStart: number }> = [];
  KEY.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = KEY.exec(text)) !== null) keys.push({ key: m[1], start: m.index, valueStart: m.index + m[0].length });
  const data: Record<string, string> = {};
  for (let i = 0; i < keys.length; i++) {
    const end = i + 1 < keys.length ? keys[i + 1].start : text.length;
    data[keys[i].key] = text.slice(keys[i].valueStart, end).trim();
  }
  let name = data.FIRMWARE_NAME;
  if (!name && data.NAME) name = data.NAME.toLowerCase().includes('malyan') && data.VER ? `${data.NAME} ${data.VER}` : data.NAME;
  if (!name) return null;
  return { name, data };
}

/** `Cap:NAME:0|1` → [NAME, flag]; null when the line is not a well-formed capability. */
export function parseCapability(line: string): [string, boolean] | null {
  if (line.length < 4 || line.slice(0, 4).toLowerCase() !== 'cap:') return null;
  const parts = line.slice(4).split(':');
  if (parts.length !== 2) return null;
  const flag = parts[1].trim();
  if (flag !== '0' && flag !== '1') return null;
  return [parts[0].trim().toUpperCase(), flag === '1'];
}
