// Module declarations for what Vite handles at build time (CSS imports).
declare module '*.css';
