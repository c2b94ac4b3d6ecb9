// The content of an OctoPrint installation as an import plan: printer profiles, G-code script files, PrusaSlicer
// profiles, the uploads tree with each folder's .metadata.json (checked against the files' SHA-1) and timelapse movies.
// Reads only; nothing here writes.
import { readdir, stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { METADATA_FILE, type FileMeta } from '../files/metadata-store.ts';
import { builtinDefaultProfile, normalizeProfile, sanitizeProfileId, type PrinterProfile } from '../printer/profiles/printer-profile-shape.ts';
import { deepMerge } from '../core/deep-merge.ts';
import { STORED_JSON_BOUNDS, jsonBoundsViolation } from '../core/bounded-json.ts';
import { parseIni } from '../slicing/prusa-slicer.ts';
import type { StoredProfile } from '../slicing/profile-store.ts';
import { checkProfileKey } from '../slicing/profile-store.ts';
import { ImportInputError, readText, readYaml, labelOf, type OctoPrintSource } from './source.ts';
import { isPlain, type Plain } from '../core/plain.ts';
import type { ImportReport } from './report.ts';

export interface UploadPlan {
  /** Path parts below uploads. */
  parts: string[];
  kind: 'file' | 'folder';
  src: string;
  size: number;
  /** Metadata entry to store for it in its folder (without content keys; those are set from the copy). */
  meta?: FileMeta;
  /** The stored hash matched the file: the analysis belongs to this content. */
  verified: boolean;
}

export interface ContentPlan {
  profiles: PrinterProfile[];
  defaultProfile: string | null;
  scripts: Record<string, string>;
  slicing: Array<{ slicer: string; profile: StoredProfile }>;
  uploads: UploadPlan[];
  timelapse: Array<{ name: string; src: string; size: number }>;
}

async function listDir(dir: string): Promise<Dirent[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function readProfiles(src: OctoPrintSource, report: ImportReport): Promise<PrinterProfile[]> {
  const out: PrinterProfile[] = [];
  for (const e of await listDir(src.folders.printerProfiles)) {
    if (!e.isFile() || !e.name.endsWith('.profile') || e.name.startsWith('.')) continue;
    const abs = join(src.folders.printerProfiles, e.name);
    const f = await readYaml(abs, labelOf(src, abs));
    if (!f) continue;
    if (!isPlain(f.value)) throw f.error([], 'a printer profile must be a mapping');
    const id = sanitizeProfileId(e.name.slice(0, -'.profile'.length));
    if (!id) {
      report.skip(labelOf(src, abs), 'no usable profile id in the file name');
      continue;
    }
    const merged = deepMerge(builtinDefaultProfile(), f.value) as Plain;
    merged.id = id;
    try {
      out.push(normalizeProfile(merged));
    } catch (err) {
      const why = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
      // The reason is a key path ("volume.width") or a short phrase ("volume size").
      throw f.error(/^[\w.]+$/.test(why) ? why.split('.') : [], `invalid printer profile value (${why})`);
    }
  }
  return out;
}

async function readScriptFiles(src: OctoPrintSource): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const gcode = join(src.folders.scripts, 'gcode');
  for (const [dir, prefix] of [[gcode, ''], [join(gcode, 'snippets'), 'snippets/']] as const) {
    for (const e of await listDir(dir)) {
      if (!e.isFile() || e.name.startsWith('.')) continue;
      const abs = join(dir, e.name);
      const text = await readText(abs, labelOf(src, abs));
      if (text !== undefined) out[prefix + e.name] = text;
    }
  }
  return out;
}

/** Folder names OctoPrint's PrusaSlicer plugins file their profiles under (not verified against a live install). */
const PRUSA_FOLDERS = new Set(['prusaslicer', 'prusa', 'PrusaSlicer']);

async function readSlicing(src: OctoPrintSource, report: ImportReport): Promise<ContentPlan['slicing']> {
  const out: ContentPlan['slicing'] = [];
  for (const slicer of await listDir(src.folders.slicingProfiles)) {
    if (!slicer.isDirectory()) continue;
    for (const e of await listDir(join(src.folders.slicingProfiles, slicer.name))) {
      const abs = join(src.folders.slicingProfiles, slicer.name, e.name);
      if (!e.isFile() || !e.name.endsWith('.profile')) continue;
      if (!PRUSA_FOLDERS.has(slicer.name)) {
        report.skip(labelOf(src, abs), `profile of slicer "${slicer.name}", which Gantry does not drive (Gantry slices with PrusaSlicer)`);
        continue;
      }
      const key = e.name.slice(0, -'.profile'.length);
      try {
        checkProfileKey(key);
      } catch {
        report.skip(labelOf(src, abs), 'profile name not usable as a Gantry profile key');
        continue;
      }
      const text = (await readText(abs, labelOf(src, abs))) ?? '';
      let doc: unknown;
      try {
        doc = parse(text);
      } catch {
        doc = undefined;
      }
      const data: Record<string, string> = {};
      let displayName = key;
      let description = '';
      if (isPlain(doc)) {
        for (const [k, v] of Object.entries(doc)) {
          if (k === '_display_name' && typeof v === 'string') displayName = v;
          else if (k === '_description' && typeof v === 'string') description = v;
          else if (!k.startsWith('_') && v !== null && typeof v !== 'object') data[k] = String(v);
        }
      } else {
        try {
          Object.assign(data, parseIni(text));
        } catch (err) {
          throw new ImportInputError(labelOf(src, abs), undefined, `not a PrusaSlicer profile: ${(err as Error).message}`);
        }
      }
      out.push({ slicer: 'prusaslicer', profile: { key, displayName, description, data } });
    }
  }
  return out;
}

/** One folder's .metadata.json, checked entry by entry. */
async function readFolderMeta(src: OctoPrintSource, dir: string): Promise<Record<string, Plain>> {
  const abs = join(dir, METADATA_FILE);
  const label = labelOf(src, abs);
  const text = await readText(abs, label);
  if (text === undefined) return {};
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ImportInputError(label, undefined, `invalid JSON (half-written or hand-edited?): ${(err as Error).message}`);
  }
  if (!isPlain(doc)) throw new ImportInputError(label, undefined, 'must be an object of entries by file name');
  for (const [name, entry] of Object.entries(doc)) {
    const bad = (key: string, what: string) => new ImportInputError(label, `${name}${key ? `.${key}` : ''}`, what);
    if (!isPlain(entry)) throw bad('', 'must be an object');
    if (entry.hash !== undefined && (typeof entry.hash !== 'string' || !/^[0-9a-f]{40}$/i.test(entry.hash))) throw bad('hash', 'must be a SHA-1 hex string');
    if (entry.display !== undefined && typeof entry.display !== 'string') throw bad('display', 'must be a string');
    if (entry.analysis !== undefined && !isPlain(entry.analysis)) throw bad('analysis', 'must be an object');
    if (entry.history !== undefined) {
      if (!Array.isArray(entry.history)) throw bad('history', 'must be a list');
      entry.history.forEach((h: unknown, i) => {
        if (!isPlain(h) || typeof h.timestamp !== 'number' || typeof h.success !== 'boolean'
          || (h.printTime !== undefined && typeof h.printTime !== 'number')
          || (h.printerProfile !== undefined && typeof h.printerProfile !== 'string') || jsonBoundsViolation(h, STORED_JSON_BOUNDS)) {
          throw bad(`history[${i}]`, 'must be {timestamp: number, success: true|false, printTime?: number, printerProfile?: string}');
        }
      });
    }
    // Every other key (userdata, a plugin's) is kept as it is and sent in every listing: bounded as clients' values are.
    for (const [key, value] of Object.entries(entry)) {
      if (key === 'history') continue;
      const problem = jsonBoundsViolation(value, STORED_JSON_BOUNDS);
      if (problem) throw bad(key, `is ${problem}`);
    }
  }
  return doc as Record<string, Plain>;
}

/** The metadata Gantry keeps: OctoPrint's entry minus `statistics`, which Gantry derives from the history. */
function gantryMeta(entry: Plain): FileMeta {
  const { statistics: _s, ...rest } = entry;
  return structuredClone(rest) as FileMeta;
}

async function walkUploads(src: OctoPrintSource, dir: string, parts: string[], out: UploadPlan[], report: ImportReport): Promise<void> {
  const meta = await readFolderMeta(src, dir);
  const seen = new Set<string>();
  for (const e of await listDir(dir)) {
    if (e.name.startsWith('.')) continue;
    const abs = join(dir, e.name);
    const here = [...parts, e.name];
    const entry = meta[e.name];
    seen.add(e.name);
    if (e.isDirectory()) {
      out.push({ parts: here, kind: 'folder', src: abs, size: 0, verified: true,
        ...(entry && typeof entry.display === 'string' ? { meta: { display: entry.display } } : {}) });
      await walkUploads(src, abs, here, out, report);
    } else if (e.isFile()) {
      const size = (await stat(abs)).size;
      if (!entry) {
        out.push({ parts: here, kind: 'file', src: abs, size, verified: false });
        continue;
      }
      const hash = await src.digest(abs);
      if (typeof entry.hash === 'string' && entry.hash.toLowerCase() !== hash) {
        // OctoPrint starts a changed file's metadata afresh; so does the import (it is analysed again).
        report.skip(`metadata of uploads/${here.join('/')}`, 'the file changed since OctoPrint recorded it (hash differs); it will be analysed again');
        out.push({ parts: here, kind: 'file', src: abs, size, verified: false, ...(typeof entry.display === 'string' ? { meta: { display: entry.display } } : {}) });
      } else {
        out.push({ parts: here, kind: 'file', src: abs, size, verified: true, meta: { ...gantryMeta(entry), hash } });
      }
    } else {
      report.skip(`uploads/${here.join('/')}`, 'not a regular file or folder (links are not followed)');
    }
  }
  for (const name of Object.keys(meta)) {
    if (!seen.has(name)) report.skip(`metadata of uploads/${[...parts, name].join('/')}`, 'the file no longer exists');
  }
}

async function readTimelapse(src: OctoPrintSource, report: ImportReport): Promise<ContentPlan['timelapse']> {
  const out: ContentPlan['timelapse'] = [];
  for (const e of await listDir(src.folders.timelapse)) {
    const abs = join(src.folders.timelapse, e.name);
    if (e.isFile() && !e.name.startsWith('.')) out.push({ name: e.name, src: abs, size: (await stat(abs)).size });
  }
  const frames = (await listDir(src.folders.timelapseTmp)).filter((e) => e.isFile());
  if (frames.length) report.skip(`${labelOf(src, src.folders.timelapseTmp)} (${frames.length} files)`, 'unrendered timelapse frames are not imported; render them in OctoPrint first if you need them');
  return out;
}

export async function readContent(src: OctoPrintSource, report: ImportReport): Promise<ContentPlan> {
  const root = (src.config?.value ?? {}) as Plain;
  const pp = isPlain(root.printerProfiles) ? root.printerProfiles : {};
  const profiles = await readProfiles(src, report);
  let defaultProfile = typeof pp.default === 'string' ? pp.default : null;
  if (defaultProfile && !profiles.some((p) => p.id === defaultProfile) && defaultProfile !== '_default') {
    report.skip('printerProfiles.default', `profile "${defaultProfile}" does not exist; Gantry's default profile applies`);
    defaultProfile = null;
  }
  const uploads: UploadPlan[] = [];
  await walkUploads(src, src.folders.uploads, [], uploads, report);
  return {
    profiles, defaultProfile,
    scripts: await readScriptFiles(src),
    slicing: await readSlicing(src, report),
    uploads,
    timelapse: await readTimelapse(src, report),
  };
}

/** What in data/ is not imported (everything but the app keys), for the report. */
export async function reportData(src: OctoPrintSource, report: ImportReport): Promise<void> {
  const why: Record<string, string> = {
    softwareupdate: 'OctoPrint update-check cache', pluginmanager: 'OctoPrint plugin repository cache',
    announcements: 'OctoPrint news cache', virtual_printer: 'state of OctoPrint\'s virtual printer',
    'preemptive_cache_config.yaml': 'OctoPrint UI cache', backup: 'OctoPrint backups (import one with --from <zip>)',
    'print_recovery_data.yaml': 'position of the last failed/cancelled print; Gantry keeps its own',
  };
  for (const e of await listDir(src.folders.data)) {
    if (e.name === 'appkeys') continue;
    report.skip(labelOf(src, join(src.folders.data, e.name)), (Object.hasOwn(why, e.name) ? why[e.name] : undefined) ?? `data of OctoPrint plugin "${e.name}", which Gantry does not have`);
  }
}
