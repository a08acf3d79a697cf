// @ts-check
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

/**
 * Layering (DESIGN.md "Layout"): src/shared is pure TypeScript; only the Electron entry and
 * the IPC transport may import electron; the renderer talks to main only through the contract.
 */
const restrict = (paths, patterns, message) => ({
  'no-restricted-imports': ['error', { paths: paths.map((name) => ({ name, message })), patterns: patterns.map((pattern) => ({ group: [pattern], message })) }],
});

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/shared/**/*.{ts,tsx}'],
    rules: restrict(['electron', 'react', 'react-dom', ...nodeBuiltins], ['node:*', 'react/*', '**/main/**', '**/renderer/**', '**/preload/**'], 'src/shared is pure TypeScript: no electron, node or react, and nothing from main, renderer or preload.'),
  },
  {
    files: ['src/main/**/*.ts'],
    ignores: ['src/main/index.ts', 'src/main/transport/ipc.ts'],
    rules: restrict(['electron'], ['electron/*', '**/renderer/**', '**/preload/**'], 'Only src/main/index.ts and src/main/transport/ipc.ts may import electron; the rest of main runs on plain Node (CLI, headless, tests).'),
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    rules: restrict(['electron', ...nodeBuiltins], ['node:*', '**/main/**', '**/preload/**'], 'The renderer talks to main only through src/shared/contract.'),
  },
  {
    files: ['src/preload/**/*.ts'],
    rules: restrict([...nodeBuiltins], ['node:*', '**/main/**', '**/renderer/**'], 'The preload exposes only the allow-listed bridge; it imports electron and src/shared only.'),
  },
);
