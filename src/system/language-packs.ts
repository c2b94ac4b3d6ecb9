// Language packs in the translations folder: list them with their metadata, install an uploaded archive, delete one.
// Layout (as OctoPrint packs ship): <locale>/… for the core, _plugins/<plugin>/<locale>/… for plugins, meta.yaml per locale.
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { syncFolder, syncTree } from '../core/atomic-file.ts';
import { invalid, notFound } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { SerialQueue } from '../core/serial-queue.ts';
import { shown } from '../core/text.ts';
import { archiveKind, extractArchive, type ExtractLimits } from './archive-extract.ts';

export const CORE_PACK = '_core';
const PLUGINS_DIR = '_plugins';
const LOCALE_RE = /^[a-zA-Z]{2,3}([_-][a-zA-Z0-9]{2,8}){0,3}$/;
const PLUGIN_RE = /^[a-zA-Z0-9][\w.-]{0,99}$/;

export interface LanguageMeta {
  locale: string;
  locale_display: string;
  locale_english: string;
  last_update?: number;
  author?: string;
}

export interface LanguageComponent {
  identifier: string;
  display: string;
  languages: LanguageMeta[];
}

export const DEFAULT_PACK_LIMITS: ExtractLimits = { maxEntries: 2000, maxTotalBytes: 50 * 1024 * 1024 };

export function isLocale(s: string): boolean {
  return LOCALE_RE.test(s);
}

function displayName(locale: string, inLocale: string): string {
  try {
    return new Intl.DisplayNames([inLocale.replace(/_/g, '-')], { type: 'language' }).of(locale.replace(/_/g, '-')) ?? locale;
  } catch {
    return locale;
  }
}

async function subdirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
}

function toTimestamp(v: unknown): number | undefined {
  if (v instanceof Date) return Math.floor(v.getTime() / 1000);
  if (typeof v === 'number' && Number.isFinite(v)) return Math.floor(v);
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : Math.floor(t / 1000);
  }
  return undefined;
}

export class LanguagePacks {
  // Installed folders change one at a time (an archive is extracted and checked outside its turn): at once, of eight
  // uploads of one pack six answered 500 (a rename onto the folder another had just put there).
  private readonly changes = new SerialQueue();

  constructor(readonly dir: string, private readonly logger: Logger, private readonly limits: ExtractLimits = DEFAULT_PACK_LIMITS) {}

  async list(): Promise<Record<string, LanguageComponent>> {
    const out: Record<string, LanguageComponent> = {
      [CORE_PACK]: { identifier: CORE_PACK, display: 'Core', languages: await this.languagesIn(this.dir) },
    };
    for (const plugin of await subdirs(join(this.dir, PLUGINS_DIR))) {
      if (!PLUGIN_RE.test(plugin)) continue;
      const languages = await this.languagesIn(join(this.dir, PLUGINS_DIR, plugin));
      if (languages.length > 0) out[plugin] = { identifier: plugin, display: plugin, languages };
    }
    return out;
  }

  private async languagesIn(dir: string): Promise<LanguageMeta[]> {
    const out: LanguageMeta[] = [];
    for (const locale of await subdirs(dir)) {
      if (!isLocale(locale)) continue;
      const meta: LanguageMeta = { locale, locale_display: displayName(locale, locale), locale_english: displayName(locale, 'en') };
      try {
        const raw = parseYaml(await readFile(join(dir, locale, 'meta.yaml'), 'utf8')) as Record<string, unknown> | null;
        const lastUpdate = toTimestamp(raw?.last_update);
        if (lastUpdate !== undefined) meta.last_update = lastUpdate;
        if (typeof raw?.author === 'string') meta.author = raw.author;
      } catch {
        // A pack without (readable) metadata is still a pack.
      }
      out.push(meta);
    }
    return out;
  }

  /** A fresh private work directory inside the translations folder, so the final moves are renames on one file system. */
  async workDir(): Promise<string> {
    const dir = join(this.dir, `.incoming-${randomBytes(8).toString('hex')}`);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /**
   * Installs the archive `file` (named `filename` by the uploader). Everything is extracted and checked in `work` first;
   * only then does each locale replace its installed version. `work` is removed in every case.
   */
  async install(file: string, filename: string, work: string): Promise<void> {
    try {
      const kind = archiveKind(filename);
      if (!kind) throw invalid('Invalid language pack, must be a zip, tar.gz, tgz or tar file');
      const staged = join(work, 'pack');
      await extractArchive(file, kind, staged, this.limits);
      const moves: Array<[from: string, to: string]> = [];
      for (const top of await subdirs(staged)) {
        if (top === PLUGINS_DIR) {
          for (const plugin of await subdirs(join(staged, PLUGINS_DIR))) {
            if (!PLUGIN_RE.test(plugin)) throw invalid(`Invalid plugin identifier in language pack: ${shown(plugin)}`);
            for (const locale of await subdirs(join(staged, PLUGINS_DIR, plugin))) {
              if (!isLocale(locale)) throw invalid(`Invalid locale in language pack: ${shown(locale)}`);
              moves.push([join(staged, PLUGINS_DIR, plugin, locale), join(this.dir, PLUGINS_DIR, plugin, locale)]);
            }
          }
        } else if (isLocale(top)) {
          moves.push([join(staged, top), join(this.dir, top)]);
        } else {
          throw invalid(`Invalid locale in language pack: ${shown(top)}`);
        }
      }
      if (moves.length === 0) throw invalid('The archive contains no language pack');
      // On disk before it replaces an installed version, which goes with the work folder.
      await syncTree(staged);
      await this.changes.run(async () => { for (const [from, to] of moves) await this.replace(from, to, work); });
      this.logger.info({ filename, locales: moves.length }, 'language pack installed');
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** Swap in a staged locale folder; the old one moves into the work dir (deleted with it). */
  private async replace(from: string, to: string, work: string): Promise<void> {
    await mkdir(join(to, '..'), { recursive: true });
    const exists = await stat(to).then(() => true, () => false);
    if (exists) await rename(to, join(work, `old-${randomBytes(6).toString('hex')}`));
    await rename(from, to);
    // Its folder and those the mkdir above may have made (a plugin's first pack), up to the translations folder.
    for (let folder = dirname(to); ; folder = dirname(folder)) {
      await syncFolder(folder);
      if (folder === this.dir || folder === dirname(folder)) break;
    }
  }

  async delete(locale: string, pack: string): Promise<void> {
    if (!isLocale(locale)) throw invalid(`Invalid locale: ${shown(locale)}`);
    if (pack !== CORE_PACK && !PLUGIN_RE.test(pack)) throw invalid(`Invalid pack: ${shown(pack)}`);
    return this.changes.run(() => this.remove(locale, pack));
  }

  private async remove(locale: string, pack: string): Promise<void> {
    const target = pack === CORE_PACK ? join(this.dir, locale) : join(this.dir, PLUGINS_DIR, pack, locale);
    const st = await stat(target).catch(() => undefined);
    if (!st?.isDirectory()) throw notFound(`No language pack ${locale} for ${pack}`);
    await rm(target, { recursive: true, force: true });
    await syncFolder(dirname(target));
    if (pack !== CORE_PACK && (await readdir(join(this.dir, PLUGINS_DIR, pack))).length === 0) {
      await rm(join(this.dir, PLUGINS_DIR, pack), { recursive: true, force: true });
      await syncFolder(join(this.dir, PLUGINS_DIR));
    }
  }
}
