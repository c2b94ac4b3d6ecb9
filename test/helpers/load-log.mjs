// Preload (`node --import`) for tests of the built server: records the URL of every ES module it loads (dist/ chunks, packages imported by name) to the file named by GANTRY_LOAD_LOG.
import { register } from 'node:module';

if (process.env.GANTRY_LOAD_LOG) {
  register('data:text/javascript,' + encodeURIComponent(`
    import { appendFileSync } from 'node:fs';
    export async function load(url, context, next) {
      appendFileSync(${JSON.stringify(process.env.GANTRY_LOAD_LOG)}, url + '\\n');
      return next(url, context);
    }`));
}
