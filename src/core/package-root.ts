// Where the package's own files are (package.json, web/dist, dist/), whether this code runs from src/ through tsx or bundled into dist/cli.js.
/** The package's root folder as a file: URL ending in a slash. src/core/package-root.ts is two levels down, dist/cli.js one. */
export const PACKAGE_ROOT: URL = new URL(import.meta.url.endsWith('.ts') ? '../../' : '../', import.meta.url);
