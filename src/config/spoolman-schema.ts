// Settings of the Spoolman client: `plugins.spoolman` — the server, how often use is reported, and what a print that
// needs more filament than the active spool has left does.
import { Type } from './typebox.ts';

export const SpoolmanSection = Type.Object({
  server: Type.String({ default: '', maxLength: 2048, description: 'Spoolman\'s URL (http://host:7912); empty: Spoolman is off' }),
  syncInterval: Type.Number({ default: 5, minimum: 0.2, maximum: 3600, description: 'Seconds between reports of filament used while printing (Moonraker\'s sync_rate)' }),
  lowFilament: Type.Union([Type.Literal('off'), Type.Literal('warn'), Type.Literal('refuse')], {
    default: 'warn', description: 'A print whose analysed filament length exceeds what the active spool has left: off, warn (the print starts, an event and a log line say so), refuse (the print does not start)',
  }),
  timeout: Type.Number({ default: 10, minimum: 0.5, maximum: 120, description: 'Seconds one request to Spoolman may take' }),
}, { default: {}, additionalProperties: true, description: 'Spoolman (Gantry, built in)' });
