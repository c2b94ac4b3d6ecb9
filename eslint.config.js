// Lint rules for the server, tests and benchmarks (the web UI has its own build).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'web/dist/', 'coverage/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['src/protocol/**', 'src/gcode/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['node:fs', 'node:fs/*', 'fs', 'serialport', 'fastify', '@fastify/*', '**/http/**', '**/transports/**', '**/printer/**', '**/files/**'],
            message: 'protocol/ and gcode/ import only gcode/ and core/ (see DEVELOPERS layout).' },
        ],
      }],
    },
  },
);
