// Which files a download route may serve: regular files whose real path (links resolved) is inside the folder served.
import { realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { sep } from 'node:path';

/**
 * The real path and stats of `path` when it is a regular file inside `root` once every link is resolved, else
 * undefined. A link placed in a served folder (`timelapse/passwd.mp4 → /etc/passwd`) served its target's bytes to
 * anyone allowed to download; a link to another file in the folder is served as that file. The real path is what
 * is opened afterwards, so a link swapped in after this check is not followed by the open.
 */
export async function servedFile(root: string, path: string): Promise<{ path: string; stats: Stats } | undefined> {
  try {
    const [realRoot, real] = await Promise.all([realpath(root), realpath(path)]);
    if (!real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) return undefined;
    const stats = await stat(real);
    return stats.isFile() ? { path: real, stats } : undefined;
  } catch {
    return undefined;
  }
}
