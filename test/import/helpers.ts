// Helpers for the OctoPrint import tests: fixture A (skipped with a reason when ../shared/data is absent), imports
// into temp base dirs, snapshots of a folder tree to prove it was not written.
import { existsSync } from 'node:fs';
import { readdir, stat, readFile, cp, chmod } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { SHARED_DIR } from '../helpers/shared-data.ts';
import { tempDirUntilExit } from '../helpers/temp-dir.ts';
import { importOctoPrint, type ImportOptions, type ImportResult } from '../../src/import/import-octoprint.ts';

export const FIXTURE_DIR = join(SHARED_DIR, 'data/octoprint-basedir-A');
export const FIXTURE_ZIP = join(SHARED_DIR, 'data/octoprint-backup-A.zip');
export const SKIP = existsSync(FIXTURE_DIR) && existsSync(FIXTURE_ZIP) ? false : `fixture A not found under ${SHARED_DIR}/data`;

/** Fixture A's test credentials (../shared/data/octoprint-basedir-A.md). */
export const A = {
  globalKey: '0123456789ABCDEF0123456789ABCDEF',
  users: {
    admin: { password: 'gantry-import-A', key: 'FEDCBA9876543210FEDCBA9876543210', appKey: '5052EDB235A84E1D9FBC8098E4C321E5' },
    alice: { password: 'alice-pass-1', key: '54FAE7022EA84565AD1CCE251554D663', appKey: 'D76616CF038C4CBF80935849CFAAD2CD' },
    bob: { password: 'bob-pass-2' },
  },
  upnpUuid: '322e96c5-efbe-4ad1-9fc0-038245dbbaa3',
};

/**
 * A temp dir for one test. Removed at exit rather than with `t.after`: hooks run in the order they were added, so a
 * per-test removal would run before the stop of a server started on it later. (Not a top-level `after` either: in a
 * process that runs several test files, scripts/test-group.mjs, it would run before the next file's tests.)
 */
export function tempDir(_t: TestContext, prefix = 'gantry-import-'): Promise<string> {
  return tempDirUntilExit(prefix);
}

/** A writable copy of fixture A's base dir, to edit for a scenario. */
export async function fixtureCopy(t: TestContext): Promise<string> {
  const dir = join(await tempDir(t, 'gantry-octoprint-'), 'octoprint');
  await cp(FIXTURE_DIR, dir, { recursive: true });
  await chmodTree(dir);
  return dir;
}

async function chmodTree(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory()) await chmodTree(join(dir, e.name));
    else await chmod(join(dir, e.name), 0o644);
  }
}

/** Imports into `<temp>/gantry` (or `baseDir`) quietly. */
export async function runImport(t: TestContext, from: string, opts: Partial<ImportOptions> = {}): Promise<ImportResult & { baseDir: string }> {
  const baseDir = opts.baseDir ?? join(await tempDir(t), 'gantry');
  const result = await importOctoPrint({ from, baseDir, ...opts });
  return { ...result, baseDir };
}

/** path → size, mtime and SHA-1 of every file below `dir` (and the folders), to compare before and after. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string, rel: string) => {
    for (const e of (await readdir(d, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = join(d, e.name);
      const st = await stat(abs);
      if (e.isDirectory()) {
        out[`${rel}${e.name}/`] = `${st.mtimeMs}`;
        await walk(abs, `${rel}${e.name}/`);
      } else {
        out[rel + e.name] = `${st.size} ${st.mtimeMs} ${st.mode.toString(8)} ${createHash('sha1').update(await readFile(abs)).digest('hex')}`;
      }
    }
  };
  await walk(dir, '');
  return out;
}
