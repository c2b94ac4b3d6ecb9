// `gantry import-octoprint`: reads an OctoPrint installation (never writing it), plans the import, and builds the
// whole new base dir in a staging folder beside the target through Gantry's own stores; only a complete build is
// swapped into place, so a failure or a kill halfway leaves the target as it was.
import { chmod, mkdir, mkdtemp, readdir, rename, rm, stat, link, copyFile, utimes, readlink, symlink, readFile, constants } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { tmpdir } from 'node:os';
import { ConfigStore } from '../config/config-store.ts';
import { deepMerge } from '../core/deep-merge.ts';
import { resolvePaths, createFolders, type Paths } from '../config/paths.ts';
import { UserStore } from '../access/user-store.ts';
import { AppKeyService } from '../access/appkeys.ts';
import { GLOBAL_KEY_USER } from '../access/access-service.ts';
import { PrinterProfiles } from '../printer/profiles/printer-profiles.ts';
import { ProfileStore } from '../slicing/profile-store.ts';
import { MetadataStore, METADATA_FILE, contentKey, type FileMeta } from '../files/metadata-store.ts';
import { EventBus } from '../core/event-bus.ts';
import { systemClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { conflict, invalid } from '../core/errors.ts';
import { syncFolder, syncTree, writeFileAtomic } from '../core/atomic-file.ts';
import { openSource, type OctoPrintSource } from './source.ts';
import type { Plain } from '../core/plain.ts';
import { readAccess, type AccessPlan } from './access-import.ts';
import { mapSettings } from './settings-import.ts';
import { readContent, reportData, type ContentPlan } from './content-import.ts';
import { ImportReport } from './report.ts';

export const REPORT_FILE = 'octoprint-import-report.txt';
/** Test hook: stop with an error right after the named step (`settings`, `users`, `profiles`, `files`, `timelapse`). */
export const FAIL_AT_ENV = 'GANTRY_IMPORT_FAIL_AT';
/** Test hook: after the named step print "import paused" and wait for good (the test kills the process). */
export const PAUSE_AT_ENV = 'GANTRY_IMPORT_PAUSE_AT';

export interface ImportOptions {
  from: string;
  baseDir: string;
  dryRun?: boolean;
  merge?: boolean;
  link?: boolean;
  /** Where progress and the report are printed (the CLI passes stdout). */
  out?: (text: string) => void;
}

export interface ImportResult {
  report: ImportReport;
  text: string;
  /** The report file in the target (not on a dry run). */
  reportFile?: string;
}

interface Plan { access: AccessPlan; settings: Plain; content: ContentPlan }

const within = (inner: string, outer: string): boolean => inner === outer || inner.startsWith(outer + sep);

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

/** Users already in the target base dir (read through Gantry's store, not written). */
async function existingUsers(target: string): Promise<Set<string>> {
  if (!(await exists(join(target, 'users.yaml')))) return new Set();
  const store = new UserStore(join(target, 'users.yaml'), join(target, 'groups.yaml'));
  await store.load();
  return new Set(store.listUsers().map((u) => u.name));
}

/**
 * Clears what a killed import left beside the target: staging folders, and the previous target of a swap that was
 * interrupted — put back in place when the target itself is missing (killed between the two renames).
 */
async function sweepStale(parent: string, target: string): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(`.${basename(target)}.import-`)) await rm(join(parent, name), { recursive: true, force: true });
  }
  for (const name of names.filter((n) => n.startsWith(`.${basename(target)}.replaced-`))) {
    if (!(await exists(target))) await rename(join(parent, name), target);
    else await rm(join(parent, name), { recursive: true, force: true });
  }
}

/** The target's current content in the staging folder: hard links (stores replace files atomically, never in place). */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const e of await readdir(from, { withFileTypes: true })) {
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory()) await linkTree(a, b);
    else if (e.isSymbolicLink()) await symlink(await readlink(a), b);
    else if (e.isFile()) await link(a, b).catch(() => copyFile(a, b, constants.COPYFILE_EXCL));
  }
}

async function failAt(step: string): Promise<void> {
  if (process.env[FAIL_AT_ENV] === step) throw new Error(`import stopped after step "${step}" (${FAIL_AT_ENV})`);
  if (process.env[PAUSE_AT_ENV] === step) {
    process.stdout.write(`import paused after step "${step}"\n`);
    await new Promise(() => setInterval(() => {}, 60_000)); // keeps the process alive until it is killed
  }
}

function countLeaves(v: unknown): number {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 1;
  return Object.values(v).reduce<number>((n, c) => n + countLeaves(c), 0);
}

function describePlan(plan: Plan, report: ImportReport): void {
  const { access, content } = plan;
  report.count('users', access.users.length);
  for (const u of access.users) {
    report.note(`user ${u.name}: ${u.active ? 'active' : 'inactive'}, groups ${u.groups.join(', ') || '-'}, ${u.apikey ? 'with' : 'no'} personal API key`);
  }
  report.count('groups (custom or changed built-in)', access.groups.length);
  report.count('global API key', access.globalKey ? 1 : 0);
  report.count('personal API keys', access.users.filter((u) => u.apikey).length);
  report.count('application keys', access.appKeys.length);
  report.count('settings (keys)', countLeaves(plan.settings));
  report.count('printer profiles', content.profiles.length);
  if (content.defaultProfile) report.note(`default printer profile: ${content.defaultProfile}`);
  report.count('G-code scripts from files', Object.keys(content.scripts).length);
  report.count('slicing profiles (PrusaSlicer)', content.slicing.length);
  const files = content.uploads.filter((u) => u.kind === 'file');
  report.count('folders', content.uploads.length - files.length);
  report.count('files', files.length);
  report.count('bytes of files', files.reduce((n, f) => n + f.size, 0));
  report.count('files with analysis', files.filter((f) => f.verified && f.meta?.analysis).length);
  report.count('print history entries', files.reduce((n, f) => n + (f.verified ? (f.meta?.history?.length ?? 0) : 0), 0));
  report.count('timelapse movies and thumbnails', content.timelapse.length);
}

async function readPlan(src: OctoPrintSource, report: ImportReport, taken: Set<string>): Promise<Plan> {
  const access = await readAccess(src, report);
  // --merge: the same name is taken to be the same person (e.g. the `admin` Gantry's first start made); OctoPrint's
  // record, password and keys win so that person's clients keep working.
  for (const u of access.users.filter((x) => taken.has(x.name))) {
    report.note(`user ${u.name} existed in the target: replaced by OctoPrint's (password, groups, API key); its application keys are kept`);
  }
  const settings = mapSettings(src.config, report);
  const content = await readContent(src, report);
  await reportData(src, report);
  return { access, settings, content };
}

async function placeFile(src: string, dst: string, useLink: boolean, report: ImportReport): Promise<void> {
  if (useLink) {
    try {
      await link(src, dst);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EACCES') throw err;
      report.count('files copied because a hard link was not possible');
    }
  }
  await copyFile(src, dst, constants.COPYFILE_EXCL);
  const st = await stat(src);
  // The copy keeps the upload date the listing shows.
  await utimes(dst, st.atime, st.mtime);
}

async function applyFiles(plan: ContentPlan, paths: Paths, useLink: boolean, report: ImportReport): Promise<void> {
  const metadata = new MetadataStore(silentLogger);
  const written = new Map<string, Set<string>>();
  for (const u of plan.uploads) {
    const dst = join(paths.uploads, ...u.parts);
    const folderAbs = join(paths.uploads, ...u.parts.slice(0, -1));
    const name = u.parts[u.parts.length - 1];
    if (u.kind === 'folder') {
      await mkdir(dst, { recursive: true });
    } else {
      if (await exists(dst)) {
        report.skip(`uploads/${u.parts.join('/')}`, 'a file of that name already exists in the target (kept as it is)');
        continue;
      }
      await placeFile(u.src, dst, useLink, report);
    }
    if (!u.meta) continue;
    const entry: FileMeta = { ...u.meta };
    if (u.kind === 'file' && u.verified) {
      const st = await stat(dst);
      const key = contentKey(st);
      entry.hashKey = key;
      if (entry.analysis) entry.analysisKey = key;
    }
    await metadata.set(folderAbs, name, entry);
    if (!written.has(folderAbs)) written.set(folderAbs, new Set());
    written.get(folderAbs)!.add(name);
  }
  await metadata.flush();
  // The store forgives failed writes (metadata is rebuildable while serving); an import must not lose any.
  for (const [folder, names] of written) {
    const text = await readFile(join(folder, METADATA_FILE), 'utf8').catch(() => '{}');
    const stored = JSON.parse(text) as Record<string, unknown>;
    for (const n of names) if (!(n in stored)) throw new Error(`metadata of ${join(folder, n)} could not be written`);
  }
}

async function applyPlan(plan: Plan, staging: string, opts: ImportOptions, report: ImportReport): Promise<void> {
  const config = await ConfigStore.load(join(staging, 'config.yaml'));
  const patch = structuredClone(plan.settings);
  const scripts = Object.keys(plan.content.scripts).length
    ? { scripts: { gcode: { ...((patch.scripts as Plain | undefined)?.gcode as Plain | undefined), ...plan.content.scripts } } } : {};
  const appKeys = [...plan.access.appKeys];
  const globalKey = plan.access.globalKey;
  const existingKey = config.current.api.key;
  const keyPatch: Plain = {};
  if (globalKey && existingKey && existingKey !== globalKey) {
    // Both keys keep working: the target's stays global, OctoPrint's acts as the global key through an app key.
    appKeys.push({ userId: GLOBAL_KEY_USER, appId: 'OctoPrint global API key (imported)', apiKey: globalKey });
    report.note('the target already had a global API key: it stays, and OctoPrint\'s global key works as well (as an application key)');
  } else if (globalKey) {
    keyPatch.api = { key: globalKey };
  }
  const firstRun = plan.access.users.length > 0 ? { server: { firstRun: false } } : {};
  await config.patch([scripts, keyPatch, firstRun].reduce<Plain>((acc, p) => deepMerge(acc, p) as Plain, patch));
  await failAt('settings');

  const paths = resolvePaths(staging, config.current);
  for (const [name, p] of Object.entries(paths)) {
    if (!within(p, staging)) throw invalid(`the target's folder.${name} (${p}) lies outside its base dir; the import needs every folder inside it`);
  }
  await createFolders(paths);

  const users = new UserStore(paths.users, join(staging, 'groups.yaml'));
  await users.load();
  await users.importRecords(plan.access.users, plan.access.groups);
  await new AppKeyService(join(paths.data, 'appkeys', 'keys.yaml'), systemClock).importKeys(appKeys);
  await failAt('users');

  const profiles = new PrinterProfiles(paths.printerProfiles, config.slice('printerProfiles'), new EventBus(), silentLogger);
  await profiles.start();
  for (const p of plan.content.profiles) await profiles.save({ ...p }, { allowOverwrite: true });
  if (plan.content.defaultProfile) await profiles.setDefault(plan.content.defaultProfile);
  await profiles.stop();
  const slicing = new ProfileStore(paths.slicingProfiles);
  for (const s of plan.content.slicing) await slicing.save(s.slicer, s.profile);
  await failAt('profiles');

  await applyFiles(plan.content, paths, opts.link === true, report);
  await failAt('files');
  await mkdir(paths.timelapse, { recursive: true });
  for (const t of plan.content.timelapse) {
    const dst = join(paths.timelapse, t.name);
    if (await exists(dst)) report.skip(`timelapse/${t.name}`, 'already in the target (kept as it is)');
    else await placeFile(t.src, dst, opts.link === true, report);
  }
  await failAt('timelapse');
}

export async function importOctoPrint(opts: ImportOptions): Promise<ImportResult> {
  const out = opts.out ?? (() => {});
  const target = resolve(opts.baseDir);
  const from = resolve(opts.from);
  if (within(target, from) || within(from, target)) {
    throw invalid(`the target base dir (${target}) and the OctoPrint source (${from}) must not contain each other`);
  }
  const parent = dirname(target);
  if (!opts.dryRun) {
    await mkdir(parent, { recursive: true });
    await sweepStale(parent, target);
  }
  const targetExists = await exists(target);
  if (targetExists && !(await stat(target)).isDirectory()) throw invalid(`${target} is not a folder`);
  const taken = await existingUsers(target);
  if (taken.size > 0 && !opts.merge) {
    throw conflict(`${target} already has users (${[...taken].join(', ')}); add --merge to import into it anyway (users of the same name are replaced by OctoPrint's)`);
  }
  const scratch = opts.dryRun ? tmpdir() : parent;
  const report = new ImportReport();
  const src = await openSource(opts.from, scratch, { dryRun: opts.dryRun });
  let staging: string | undefined;
  try {
    out(`Reading OctoPrint data from ${opts.from}\n`);
    const plan = await readPlan(src, report, taken);
    describePlan(plan, report);
    if (opts.dryRun) {
      const text = report.render(`Dry run: would import from ${opts.from} into ${target}${opts.merge ? ' (merge)' : ''}; nothing was written.`);
      out(text);
      return { report, text };
    }
    staging = await mkdtemp(join(parent, `.${basename(target)}.import-`));
    if (targetExists) {
      await linkTree(target, staging);
      await chmod(staging, (await stat(target)).mode & 0o7777);
    }
    await applyPlan(plan, staging, opts, report);
    const text = report.render(`Imported from ${opts.from} into ${target}${opts.merge ? ' (merge)' : ''} on ${new Date().toISOString()}.`);
    await writeFileAtomic(join(staging, REPORT_FILE), text);
    // All of it on disk before it replaces the target: a power cut after the swap must not leave half an import
    // (uploads copied but not yet written out) where the previous base dir was.
    await syncTree(staging);
    await swapIn(staging, target, targetExists);
    staging = undefined;
    out(text);
    out(`The report is saved in ${join(target, REPORT_FILE)}.\n`);
    return { report, text, reportFile: join(target, REPORT_FILE) };
  } finally {
    if (staging) await rm(staging, { recursive: true, force: true });
    await src.dispose();
  }
}

/** Puts the finished staging folder in the target's place; on failure the target is put back. */
async function swapIn(staging: string, target: string, targetExists: boolean): Promise<void> {
  if (!targetExists) {
    await rename(staging, target);
    await syncFolder(dirname(target));
    return;
  }
  const old = await mkdtemp(join(dirname(target), `.${basename(target)}.replaced-`));
  await rm(old, { recursive: true });
  await rename(target, old);
  try {
    await rename(staging, target);
  } catch (err) {
    await rename(old, target);
    throw err;
  }
  // The swap on disk before the previous target goes.
  await syncFolder(dirname(target));
  await rm(old, { recursive: true, force: true });
}

/** For the CLI's help text. */
export const IMPORT_USAGE = 'gantry import-octoprint --from <octoprint basedir | backup .zip> [--basedir DIR] [--dry-run] [--merge] [--link]';

