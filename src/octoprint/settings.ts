// OctoPrint's settings tree on the wire (/api/settings): every section open (the mapping in src/http/settings-map.ts
// decides their keys; plugin settings are whatever plugins stored), a few fields clients read typed.
import { Type } from '../config/typebox.ts';
import { Nullable, OpenObject } from './schema-kit.ts';

const Section = Type.Optional(OpenObject({}));

export const SettingsSchema = OpenObject({
  api: Type.Optional(OpenObject({ enabled: Type.Optional(Type.Boolean()), key: Type.Optional(Nullable('string')),
    allowCrossOrigin: Type.Optional(Type.Boolean()) })),
  appearance: Section,
  feature: Section,
  folder: Section,
  gcodeAnalysis: Section,
  plugins: Section,
  printer: Section,
  scripts: Section,
  serial: Type.Optional(OpenObject({
    port: Type.Optional(Nullable('string')), baudrate: Type.Optional(Nullable('number')), autoconnect: Type.Optional(Type.Boolean()),
    portOptions: Type.Optional(Type.Array(Type.String())), baudrateOptions: Type.Optional(Type.Array(Type.Number())),
  })),
  server: Section,
  slicing: Section,
  system: Section,
  temperature: Section,
  terminalFilters: Type.Optional(Type.Array(OpenObject({}))),
  webcam: Section,
});

const TemplateEntry = Type.Object({ id: Type.String(), name: Type.String() });
/** The order of the UI's components per template type. */
export const TemplatesSchema = Type.Object({ order: Type.Object({}, { additionalProperties: Type.Array(TemplateEntry) }) });
