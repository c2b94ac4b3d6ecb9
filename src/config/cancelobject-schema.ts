// Settings of cancelling one object: `plugins.cancelobject` with the Cancelobject plugin's own keys and defaults
// (docs/reference/plugins.md §2.4: OctoPod reads `ignored` from /api/settings), plus Gantry's under `gantry`.
import { bool, str, obj } from './schema-fields.ts';

export const CancelObjectSection = obj({
  shownav: bool(true, 'Show the object being printed in the navigation bar'),
  markers: bool(true, 'Show the objects in the G-code preview'),
  stoptags: bool(false, 'Kept for the plugin\'s clients; Gantry always ends a skip at the object\'s end label'),
  ignored: str('ENDGCODE,STARTGCODE', 'Object names (comma list) that are listed as ignored and cannot be cancelled'),
  beforegcode: str('', 'G-code (comma list) sent where a skipped section begins'),
  aftergcode: str('', 'G-code (comma list) sent after a skipped section ends'),
  allowed: str('', 'Kept for the plugin\'s clients; Gantry keeps every non-move line of a skipped section anyway'),
  gantry: obj({
    firmwareM486: bool(false, 'This printer\'s firmware cancels objects itself (Marlin CANCEL_OBJECTS, RepRapFirmware, Prusa): send M486 P<id> and keep the file\'s M486 lines instead of skipping on the host'),
  }, 'Gantry additions'),
}, 'Cancel one object (Cancelobject compatible)');
