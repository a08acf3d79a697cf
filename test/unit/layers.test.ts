import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { runtimeImportCircles } from '../support/import-circles';
import { useTempDirs } from '../support/temp';

/** The lint rule that holds src/main and the renderer to the allowed-imports matrix, tried on planted files. */
const root = projectRoot();
// A planted file is in no TypeScript project, so the typed rules (which need one) are off for it.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: {
    files: ['**/planted.{ts,tsx}'],
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
});

async function ruleMessages(rule: string, file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.filter((message) => message.ruleId === rule).map((message) => message.message);
}
const layerMessages = (file: string, code: string) => ruleMessages('inferlab/layers', file, code);

describe('npm run lint enforces the allowed-imports matrix of src/main', () => {
  it.each([
    [
      'src/main/core/planted.ts',
      "import { rpcAccess } from '../services/access';\nexport const planted = rpcAccess;\n",
      /core may not import services/,
    ],
    [
      'src/main/store/planted.ts',
      "import { ServerManager } from '../server/server-manager';\nexport const planted = ServerManager;\n",
      /store may not import server/,
    ],
    // The store keeps what it is given: the engine's profile rules reach it from above.
    [
      'src/main/store/planted.ts',
      "import { defaultProfile } from '../engines/llamacpp/launch-args';\nexport const planted = defaultProfile;\n",
      /store may not import engines/,
    ],
    // Type-only imports count: a type from above is still an arrow pointing up.
    [
      'src/main/server/planted.ts',
      "import type { RunResult } from '../runner/run-workload';\nexport type Planted = RunResult;\n",
      /server may not import runner \(type-only imports included\)/,
    ],
    ['src/main/metrics/planted.ts', "export const load = () => import('../runner/run-workload');\n", /metrics may not import runner/],
    ['src/main/experiments/planted.ts', "export const load = () => import('../cli/usage');\n", /experiments may not import cli/],
    // A face reaches protocols, the store and the engines through the services.
    [
      'src/main/cli/commands/planted.ts',
      "import { runRegressionCheck } from '../../experiments/regression-check';\nexport const planted = runRegressionCheck;\n",
      /cli may not import experiments/,
    ],
    [
      'src/main/cli/commands/planted.ts',
      "import type { RunRow } from '../../store/run-store';\nexport type Planted = RunRow;\n",
      /cli may not import store/,
    ],
    [
      'src/main/cli/commands/planted.ts',
      "import { applySettings } from '../../engines/llamacpp/profile-rules';\nexport const planted = applySettings;\n",
      /cli may not import engines/,
    ],
    ['src/shared/planted.ts', "export * from '../main/core/errors';\n", /shared may not import core/],
    [
      'src/main/gadgets/planted.ts',
      "import { AppError } from '../core/errors';\nexport const planted = AppError;\n",
      /src\/main\/gadgets is in no layer/,
    ],
  ])('refuses %s: %s', async (file, code, message) => {
    const messages = await layerMessages(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(message);
  });

  it('accepts what each unit lists, and the one module the CLI may read beside them', async () => {
    expect(
      await layerMessages(
        'src/main/services/planted.ts',
        "import { AppError } from '../core/errors';\nimport { ServerManager } from '../server/server-manager';\nexport const planted = [AppError, ServerManager];\n",
      ),
    ).toEqual([]);
    expect(
      await layerMessages(
        'src/main/server/planted.ts',
        "import { streamCompletion } from '../client/stream-client';\nexport const planted = streamCompletion;\n",
      ),
    ).toEqual([]);
    expect(
      await layerMessages(
        'src/main/cli/commands/planted.ts',
        "import { allowedExtraFlags } from '../../engines/llamacpp/extra-flags';\nimport { shellAccess } from '../../services/access';\nexport const planted = [allowedExtraFlags, shellAccess];\n",
      ),
    ).toEqual([]);
  });
});

describe('npm run lint enforces the allowed-imports matrix of the renderer', () => {
  it.each([
    // The circle that got in: a view reaching for the list of views (view-code.ts), which loads it.
    [
      'src/renderer/src/views/planted.tsx',
      "import { VIEWS } from '../view-code';\nexport const planted = VIEWS;\n",
      /renderer\/views may not import renderer\/shell/,
    ],
    [
      'src/renderer/src/components/planted.tsx',
      "import { RunsView } from '../views/RunsView';\nexport const planted = RunsView;\n",
      /renderer\/components may not import renderer\/views/,
    ],
    [
      'src/renderer/src/experiment-kinds/planted.tsx',
      "export const load = () => import('../views/ExperimentsView');\n",
      /renderer\/experiment-kinds may not import renderer\/views/,
    ],
    [
      'src/renderer/src/hooks/planted.ts',
      "import { ErrorBox } from '../components/ErrorBox';\nexport const planted = ErrorBox;\n",
      /renderer\/hooks may not import renderer\/components/,
    ],
    [
      'src/renderer/src/api/planted.ts',
      "import type { View } from '../state/store';\nexport type Planted = View;\n",
      /renderer\/api may not import renderer\/state \(type-only imports included\)/,
    ],
    [
      'src/renderer/src/state/planted.ts',
      "export { useAction } from '../hooks/use-action';\n",
      /renderer\/state may not import renderer\/hooks/,
    ],
    [
      'src/renderer/src/gadgets/planted.ts',
      "import { when } from '../components/format';\nexport const planted = when;\n",
      /src\/renderer\/src\/gadgets is in no layer/,
    ],
  ])('refuses %s: %s', async (file, code, message) => {
    const messages = await layerMessages(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(message);
  });

  it('accepts what each unit lists, and a stylesheet', async () => {
    expect(
      await layerMessages(
        'src/renderer/src/views/planted.tsx',
        "import { ErrorBox } from '../components/ErrorBox';\nimport { useAction } from '../hooks/use-action';\nimport { useAppStore } from '../state/store';\nimport { EXPERIMENT_KIND_VIEWS } from '../experiment-kinds/registry';\nimport { RunView } from './RunView';\nexport const planted = [ErrorBox, useAction, useAppStore, EXPERIMENT_KIND_VIEWS, RunView];\n",
      ),
    ).toEqual([]);
    expect(
      await layerMessages(
        'src/renderer/src/planted.tsx',
        "import './styles.css';\nimport { createClient } from './api/client';\nexport const load = () => import('./views/RunsView');\nexport const planted = createClient;\n",
      ),
    ).toEqual([]);
  });

  // An error from main must reach the person: a rejection handler that takes no error drops it.
  it('refuses a then/catch handler in the renderer that drops the error, and accepts one that shows it', async () => {
    const dropped = await ruleMessages(
      'no-restricted-syntax',
      'src/renderer/src/views/planted.tsx',
      'export const planted = (load: () => Promise<number>, set: (value: number) => void) => {\n  void load().then(set, () => undefined);\n  void load().catch(() => {});\n};\n',
    );
    expect(dropped).toHaveLength(2);
    expect(dropped[0]).toMatch(/drops the error: call through useAction/);
    expect(
      await ruleMessages(
        'no-restricted-syntax',
        'src/renderer/src/views/planted.tsx',
        'export const planted = (load: () => Promise<number>, set: (value: number) => void, show: (error: Error) => void) =>\n  void load().then(() => set(1), show);\n',
      ),
    ).toEqual([]);
  });
});

describe('runtime imports', () => {
  const tempDir = useTempDirs();

  // The matrix orders units; a circle inside a unit, or through a dynamic import, is caught here.
  // Parsing every file of src takes a few seconds the first time, more on a busy machine.
  it('close no circle in src (type-only imports aside)', { timeout: 30_000 }, () => {
    expect(runtimeImportCircles(path.join(root, 'src'))).toEqual([]);
  });

  it('are found circling through a dynamic import, and type-only imports are not', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'list.ts'), "export const load = () => import('./view');\n");
    fs.writeFileSync(
      path.join(dir, 'view.tsx'),
      "import { load } from './list';\nimport type { Shape } from './shape';\nexport const view: Shape = { load };\n",
    );
    fs.writeFileSync(
      path.join(dir, 'shape.ts'),
      "import type { view } from './view';\nexport type Shape = { load: unknown; of?: typeof view };\n",
    );
    expect(runtimeImportCircles(dir)).toEqual([['list.ts', 'view.tsx', 'list.ts']]);
  });
});

describe('docs/ARCHITECTURE.md', () => {
  it('draws the same matrix the lint rule enforces, unit by unit', async () => {
    const { ALLOWED_IMPORTS } = (await import(path.join(root, 'eslint.config.js'))) as { ALLOWED_IMPORTS: Record<string, string[]> };
    const text = fs.readFileSync(path.join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');
    const drawn = new Map<string, string[]>();
    for (const row of text.matchAll(/^\| (`[^|]+) \| [^|]+ \| ([^|]+) \|$/gm)) {
      const allowed = row[2]!.trim() === '—' ? [] : row[2]!.split(',').map((unit) => unit.trim());
      for (const unit of row[1]!.match(/`[^`]+`/g)!) drawn.set(unit.slice(1, -1), ['shared', ...allowed].sort());
    }
    const enforced = Object.fromEntries(
      Object.entries(ALLOWED_IMPORTS)
        .filter(([unit]) => unit !== 'shared')
        .map(([unit, allowed]) => [unit, [...allowed].sort()]),
    );
    expect(Object.fromEntries(drawn)).toEqual(enforced);
  });
});
