// Build of the browser UI: Preact + uPlot bundled by Vite into web/dist, served by the server under /static/.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Assets are served from /static/ (see src/http/routes/ui.ts); index.html itself is answered at / and /login, which
  // writes the real asset path (with a reverse proxy's prefix) into it. Relative, so the bundle's own references (the
  // G-code worker, CSS urls) resolve next to the bundle wherever it is mounted.
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    reportCompressedSize: false,
    chunkSizeWarningLimit: 400,
  },
});
