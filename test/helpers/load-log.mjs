// Preload (`node --import`) for tests of the built server: records every module it loads (dist/ files, packages, as file URLs) to the file named by GANTRY_LOAD_LOG as it loads it (ES modules through a loader hook, CommonJS ones, dist/ among them, through require), and at exit the built-in modules loaded by then (`node:name`).
import Module, { register } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

if (process.env.GANTRY_LOAD_LOG) {
  const log = process.env.GANTRY_LOAD_LOG;
  register('data:text/javascript,' + encodeURIComponent(`
    import { appendFileSync } from 'node:fs';
    export async function load(url, context, next) {
      appendFileSync(${JSON.stringify(log)}, url + '\\n');
      return next(url, context);
    }`));
  const seen = new Set();
  const load = Module._load;
  Module._load = function loadAndLog(request, parent, isMain) {
    const exports = Reflect.apply(load, this, arguments);
    if (!Module.isBuiltin(request)) {
      const file = Module._resolveFilename(request, parent, isMain);
      if (!seen.has(file)) {
        seen.add(file);
        appendFileSync(log, `${pathToFileURL(file).href}\n`);
      }
    }
    return exports;
  };
  process.on('exit', () => {
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => `node:${m.slice('NativeModule '.length)}`);
    appendFileSync(log, builtins.join('\n') + '\n');
  });
}
