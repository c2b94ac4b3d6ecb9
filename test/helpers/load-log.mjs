// Preload (`node --import`) for tests of the built server: records the URL of every ES module it loads (dist/ chunks, packages imported by name) to the file named by GANTRY_LOAD_LOG, and at exit the built-in modules loaded by then (`node:name`).
import { register } from 'node:module';
import { appendFileSync } from 'node:fs';

if (process.env.GANTRY_LOAD_LOG) {
  const log = process.env.GANTRY_LOAD_LOG;
  register('data:text/javascript,' + encodeURIComponent(`
    import { appendFileSync } from 'node:fs';
    export async function load(url, context, next) {
      appendFileSync(${JSON.stringify(log)}, url + '\\n');
      return next(url, context);
    }`));
  process.on('exit', () => {
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => `node:${m.slice('NativeModule '.length)}`);
    appendFileSync(log, builtins.join('\n') + '\n');
  });
}
