// The device settings a provider reads (`plugins.psucontrol.gantry`, src/config/power-schema.ts).
import type { Config } from '../../config/schema.ts';

export type PsuControlSettings = Config['plugins']['psucontrol'];
export type PowerDeviceSettings = PsuControlSettings['gantry'];
