// The farm's printers besides `default` (config.yaml `printers`): where each one's port, HTTP port and own folders are.
import { Type } from './typebox.ts';
import type { Static } from 'typebox';

/** A printer's name: part of its URL prefix (`/printer/NAME/`), its MQTT topic and its folder, so a plain word. */
export const PRINTER_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$';

export const PrinterEntry = Type.Object({
  name: Type.String({ pattern: PRINTER_NAME_PATTERN, description: 'Name in the farm: /printer/NAME/ on the main port, its MQTT topic, its folder' }),
  serialPort: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()], { description: 'Serial device (a stable /dev/serial/by-id/… name); written to the printer\'s own config when it is added' })),
  baudrate: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()], { description: 'Baud rate (absent: detected)' })),
  virtual: Type.Optional(Type.Boolean({ description: 'The built-in virtual printer instead of a serial port' })),
  httpPort: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()], { description: 'Its own HTTP port besides /printer/NAME/ on the main port (0: any free port)' })),
  basedir: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()], { description: 'Its own config and data (default: <basedir>/printers/NAME)' })),
}, { additionalProperties: false });

export type PrinterEntry = Static<typeof PrinterEntry>;

export const PrintersSection = Type.Array(PrinterEntry, { default: [], description: 'The farm\'s printers besides `default` (the printer of this config, on the main port)' });
