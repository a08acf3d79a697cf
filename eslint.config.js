// @ts-check
import { builtinModules } from 'node:module';
import path from 'node:path';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

/**
 * Layering (docs/ARCHITECTURE.md): src/shared is pure TypeScript; only the Electron entry and
 * the IPC transport may import electron; the renderer talks to main only through the contract.
 */
const restrict = (paths, patterns, message) => ({
  'no-restricted-imports': [
    'error',
    { paths: paths.map((name) => ({ name, message })), patterns: patterns.map((pattern) => ({ group: [pattern], message })) },
  ],
});

/**
 * What each unit of src/main (a folder, or a file at its top) may import, type-only imports
 * included; src/shared is open to all and imports none of them. The matrix is explicit rather
 * than a ladder so that a unit's dependencies are a decision, and docs/ARCHITECTURE.md draws it.
 */
const ALLOWED_IMPORTS = {
  shared: [],
  core: ['shared'],
  models: ['shared', 'core'],
  workload: ['shared', 'core', 'models'],
  telemetry: ['shared', 'core'],
  client: ['shared', 'core'],
  engines: ['shared', 'core'],
  store: ['shared', 'core', 'workload'],
  server: ['shared', 'core', 'client', 'engines', 'models', 'store', 'telemetry'],
  metrics: ['shared', 'core', 'client', 'models', 'telemetry'],
  runner: ['shared', 'core', 'client', 'engines', 'metrics', 'models', 'server', 'store', 'telemetry', 'workload'],
  experiments: ['shared', 'core', 'client', 'engines', 'metrics', 'models', 'runner', 'server', 'store', 'telemetry', 'workload'],
  demo: ['shared', 'core', 'client', 'metrics', 'models', 'runner', 'server', 'store', 'workload'],
  setup: ['shared', 'core', 'engines', 'models'],
  'doctor.ts': ['shared', 'core', 'engines', 'models', 'server', 'store', 'telemetry'],
  services: [
    'shared',
    'core',
    'client',
    'demo',
    'engines',
    'experiments',
    'metrics',
    'models',
    'runner',
    'server',
    'setup',
    'store',
    'telemetry',
    'workload',
  ],
  'services.ts': ['shared', 'core', 'doctor.ts', 'engines', 'server', 'services', 'store', 'telemetry'],
  rpc: ['shared', 'core'],
  transport: ['shared', 'core', 'rpc', 'services.ts'],
  'headless.ts': ['shared', 'core', 'rpc', 'services.ts', 'transport'],
  // The faces: the CLI reaches everything below through the services, and reads models' names and quantization types.
  cli: ['shared', 'core', 'doctor.ts', 'headless.ts', 'models', 'services', 'services.ts', 'window-grants.ts'],
  'cli.ts': ['shared', 'core', 'cli', 'services'],
  'window-grants.ts': ['shared', 'core'],
  'window-state.ts': ['shared', 'core'],
  'desktop-shell.ts': ['shared', 'core'],
  'index.ts': ['shared', 'core', 'desktop-shell.ts', 'window-grants.ts', 'window-state.ts'],
  // The renderer (src/renderer/src): a folder is a unit, and the files at its top are one, the shell.
  'renderer/api': ['shared'],
  'renderer/state': ['shared'],
  'renderer/hooks': ['shared'],
  // A chart follows the theme in the store; the error box knows the error type the client throws.
  'renderer/components': ['shared', 'renderer/api', 'renderer/state'],
  'renderer/experiment-kinds': ['shared', 'renderer/components'],
  // A view is handed the client by the shell; it calls main through it and the action hook.
  'renderer/views': ['shared', 'renderer/components', 'renderer/experiment-kinds', 'renderer/hooks', 'renderer/state'],
  'renderer/shell': ['shared', 'renderer/api', 'renderer/components', 'renderer/hooks', 'renderer/state', 'renderer/views'],
};
export { ALLOWED_IMPORTS };

/** Single modules a unit may import outside its list, each for a stated reason. */
const ALLOWED_MODULES = {
  // --help prints the extra-flag allow-list itself.
  cli: [path.join('engines', 'llamacpp', 'extra-flags')],
};
const SRC = path.join(import.meta.dirname, 'src');

const RENDERER = path.join(SRC, 'renderer', 'src');

/**
 * The unit a path belongs to: the folder (or top-level file) of src/main; 'shared' for src/shared;
 * for the renderer, `renderer/` and its folder, or 'renderer/shell' for the files at its top; null elsewhere.
 */
function unitOf(file) {
  const inRenderer = path.relative(RENDERER, file).split(path.sep);
  if (inRenderer[0] !== '..') return inRenderer.length === 1 ? 'renderer/shell' : `renderer/${inRenderer[0]}`;
  const relative = path.relative(SRC, file).split(path.sep);
  if (relative[0] === 'shared') return 'shared';
  if (relative[0] !== 'main' || relative.length < 2) return null;
  return relative.length === 2 && !relative[1].endsWith('.ts') ? `${relative[1]}.ts` : relative[1];
}

/** Where a unit's files are, for messages. */
const placeOf = (unit) => (unit.startsWith('renderer/') ? `src/renderer/src/${unit.slice('renderer/'.length)}` : `src/main/${unit}`);

const layersPlugin = {
  rules: {
    layers: {
      meta: { type: 'problem', schema: [] },
      create(context) {
        const from = unitOf(context.filename);
        if (from === null) return {};
        const check = (node, specifier) => {
          // A stylesheet is no module of a layer.
          if (typeof specifier !== 'string' || !specifier.startsWith('.') || specifier.endsWith('.css')) return;
          const target = path.resolve(path.dirname(context.filename), specifier);
          const to = unitOf(target);
          if (to === null || to === from) return;
          for (const unit of [from, to]) {
            if (!(unit in ALLOWED_IMPORTS))
              return context.report({ node, message: `${placeOf(unit)} is in no layer: add it to ALLOWED_IMPORTS in eslint.config.js` });
          }
          if (ALLOWED_IMPORTS[from].includes(to)) return;
          if ((ALLOWED_MODULES[from] ?? []).some((allowed) => target.endsWith(allowed))) return;
          context.report({
            node,
            message: `${from} may not import ${to} (type-only imports included): ${from} imports only ${ALLOWED_IMPORTS[from].join(', ') || 'nothing of src/main'} (ALLOWED_IMPORTS in eslint.config.js, docs/ARCHITECTURE.md)`,
          });
        };
        return {
          ImportDeclaration: (node) => check(node, node.source.value),
          ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
          ExportAllDeclaration: (node) => check(node, node.source.value),
          ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
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
    // A path check, a grant or a cancel that is called and not awaited does nothing in time: in
    // the service, a forgotten await is a check that silently passes. Typed linting sees that.
    files: ['src/main/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    // A function that outgrows this does more than one job: give each its own name (docs/ARCHITECTURE.md, "Size").
    files: ['src/main/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  {
    files: ['src/renderer/src/**/*.tsx'],
    rules: { 'max-lines-per-function': ['error', { max: 150 }] },
  },
  {
    files: ['src/main/**/*.ts', 'src/shared/**/*.ts', 'src/renderer/src/**/*.{ts,tsx}'],
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
  {
    // A failed call must reach the person: a rejection handler that takes no error drops it. Call
    // through useAction and show its error; a deliberate drop says why on an eslint-disable line.
    files: ['src/renderer/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          "CallExpression[callee.property.name='catch'] > :function[params.length=0]:nth-child(1)",
          "CallExpression[callee.property.name='then'] > :function[params.length=0]:nth-child(2)",
        ].map((selector) => ({
          selector,
          message: 'This drops the error: call through useAction (hooks/use-action.ts) and show its error where the person looks.',
        })),
      ],
    },
  },
);
