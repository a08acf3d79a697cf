// @ts-check
import { builtinModules } from 'node:module';
import path from 'node:path';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

/**
 * Layering (DESIGN.md "Layout"): src/shared is pure TypeScript; only the Electron entry and
 * the IPC transport may import electron; the renderer talks to main only through the contract.
 */
const restrict = (paths, patterns, message) => ({
  'no-restricted-imports': [
    'error',
    { paths: paths.map((name) => ({ name, message })), patterns: patterns.map((pattern) => ({ group: [pattern], message })) },
  ],
});

/**
 * The layers of src/main, lowest first (src/shared below them all). A module may import from
 * its own layer or any lower one, never from a higher one, so no cycle can cross layers and
 * the CLI, the services and the transports stay the top of the graph.
 */
const LAYERS = [
  ['shared'],
  ['core'],
  ['engines', 'models', 'workload', 'store'],
  ['server', 'runner', 'metrics', 'telemetry'],
  ['experiments', 'demo', 'setup'],
  ['services', 'services.ts', 'rpc', 'doctor.ts'],
  ['transport', 'cli', 'cli.ts', 'index.ts', 'desktop-shell.ts', 'window-grants.ts', 'headless.ts', 'window-state.ts'],
];
/** What the CLI may not import values from, and the one exception: the extra-flag allow-list that --help prints. */
const FACE_FORBIDDEN = ['store', 'runner', 'server', 'engines'];
const FACE_EXCEPTIONS = [path.join('engines', 'llamacpp', 'extra-flags')];
const layerOf = new Map(LAYERS.flatMap((units, level) => units.map((unit) => [unit, level])));
const SRC = path.join(import.meta.dirname, 'src');

/** The folder (or top-level file) of src/main a path belongs to; 'shared' for src/shared; null outside. */
function unitOf(file) {
  const relative = path.relative(SRC, file).split(path.sep);
  if (relative[0] === 'shared') return 'shared';
  if (relative[0] !== 'main' || relative.length < 2) return null;
  return relative.length === 2 && !relative[1].endsWith('.ts') ? `${relative[1]}.ts` : relative[1];
}

const layersPlugin = {
  rules: {
    layers: {
      meta: { type: 'problem', schema: [] },
      create(context) {
        const from = unitOf(context.filename);
        if (from === null) return {};
        const check = (node, specifier) => {
          if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
          const to = unitOf(path.resolve(path.dirname(context.filename), specifier));
          if (to === null || to === from) return;
          for (const unit of [from, to]) {
            if (!layerOf.has(unit))
              return context.report({ node, message: `src/main/${unit} is in no layer: add it to LAYERS in eslint.config.js` });
          }
          if (layerOf.get(to) > layerOf.get(from)) {
            context.report({
              node,
              message: `${from} (layer ${layerOf.get(from)}) may not import ${to} (layer ${layerOf.get(to)}): imports point down, ${LAYERS.map((units) => units.join('/')).join(' ← ')}`,
            });
          }
        };
        // The CLI is a face: it reaches the store, runner, servers and engines through the services, never directly.
        const faceFiles = from === 'cli' || from === 'cli.ts';
        const checkFace = (node, specifier, typeOnly) => {
          if (!faceFiles || typeOnly || typeof specifier !== 'string' || !specifier.startsWith('.')) return;
          const target = path.resolve(path.dirname(context.filename), specifier);
          const to = unitOf(target);
          if (!FACE_FORBIDDEN.includes(to) || FACE_EXCEPTIONS.some((allowed) => target.endsWith(allowed))) return;
          context.report({ node, message: `the CLI reaches ${to} only through the services (a type import is fine): ${specifier}` });
        };
        const typeOnly = (node) =>
          node.importKind === 'type' ||
          (node.specifiers.length > 0 && node.specifiers.every((specifier) => specifier.importKind === 'type'));
        return {
          ImportDeclaration: (node) => {
            check(node, node.source.value);
            checkFace(node, node.source.value, typeOnly(node));
          },
          ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
          ExportAllDeclaration: (node) => check(node, node.source.value),
          ImportExpression: (node) => {
            if (node.source.type !== 'Literal') return;
            check(node, node.source.value);
            checkFace(node, node.source.value, false);
          },
        };
      },
    },
  },
};

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
    files: ['src/main/**/*.ts', 'src/shared/**/*.ts'],
    plugins: { inferlab: layersPlugin },
    rules: { 'inferlab/layers': 'error' },
  },
  {
    files: ['src/shared/**/*.{ts,tsx}'],
    rules: restrict(
      ['electron', 'react', 'react-dom', ...nodeBuiltins],
      ['node:*', 'react/*', '**/main/**', '**/renderer/**'],
      'src/shared is pure TypeScript: no electron, node or react, and nothing from main or renderer.',
    ),
  },
  {
    files: ['src/main/**/*.ts'],
    ignores: ['src/main/index.ts'],
    rules: restrict(
      ['electron'],
      ['electron/*', '**/renderer/**'],
      'Only src/main/index.ts (the desktop window) may import electron; the rest of main runs on plain Node (CLI, serve, tests).',
    ),
  },
  {
    files: ['src/preload/**/*.ts'],
    rules: restrict(
      nodeBuiltins,
      ['node:*', '**/main/**', '**/renderer/**'],
      'The preload bridges one call from the page to the window (src/shared/desktop-bridge.ts); it imports electron and that, nothing else.',
    ),
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    rules: restrict(
      ['electron', ...nodeBuiltins],
      ['node:*', '**/main/**'],
      'The renderer talks to main only through src/shared/contract.',
    ),
  },
);
