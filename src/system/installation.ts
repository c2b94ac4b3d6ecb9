// Installation identity: the stable UUID (UPnP uuid, Home Assistant's device id) created once and kept in config.yaml.
import { randomUUID } from 'node:crypto';
import type { ConfigSlice } from '../config/config-slice.ts';

/** Creates `server.uuid` on first start; later starts keep the stored one so clients keep recognising this host. */
export async function ensureInstallationId(config: ConfigSlice<'server'>): Promise<string> {
  const existing = config.get().server.uuid;
  if (existing) return existing;
  const uuid = randomUUID();
  await config.patch({ server: { uuid } });
  return uuid;
}
