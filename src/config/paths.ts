// Base-dir layout: where every folder of the host lives, resolved once from the settings and created on start.
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { homedir } from 'node:os';
import type { Config } from './schema.ts';

export interface Paths {
  base: string;
  config: string;
  users: string;
  uploads: string;
  logs: string;
  data: string;
  scripts: string;
  printerProfiles: string;
  slicingProfiles: string;
  translations: string;
  timelapse: string;
  watched: string;
}

export const defaultBaseDir = (): string => join(homedir(), '.gantry');

export function resolvePaths(baseDir: string, config?: Config): Paths {
  const base = resolve(baseDir);
  const f = config?.folder;
  const pick = (configured: string | null | undefined, name: string) => (configured ? resolve(base, configured) : join(base, name));
  return {
    base,
    config: join(base, 'config.yaml'),
    users: join(base, 'users.yaml'),
    uploads: pick(f?.uploads, 'uploads'),
    logs: pick(f?.logs, 'logs'),
    data: pick(f?.data, 'data'),
    scripts: pick(f?.scripts, 'scripts'),
    printerProfiles: pick(f?.printerProfiles, 'printerProfiles'),
    slicingProfiles: pick(f?.slicingProfiles, 'slicingProfiles'),
    translations: pick(f?.translations, 'translations'),
    timelapse: pick(f?.timelapse, 'timelapse'),
    watched: pick(f?.watched, 'watched'),
  };
}

export async function createFolders(paths: Paths): Promise<void> {
  for (const dir of [paths.base, paths.uploads, paths.logs, paths.data, paths.scripts, paths.printerProfiles,
    paths.slicingProfiles, paths.translations, paths.timelapse, paths.watched]) {
    await mkdir(dir, { recursive: true });
  }
}
