// Zip archives built in memory for tests (yazl): plain files, empty folders and Unix modes (links) as given.
import yazl from 'yazl';

export interface ZipMemberSpec { name: string; data?: string | Buffer; mode?: number; dir?: boolean }

export function zipOf(entries: ZipMemberSpec[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    if (e.dir) zip.addEmptyDirectory(e.name);
    else zip.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data ?? ''), e.name, e.mode ? { mode: e.mode } : {});
  }
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}
