import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';

/** The lint rule that holds src/main to its allowed-imports matrix, tried on planted files. */
const root = projectRoot();
// A planted file is in no TypeScript project, so the typed rules (which need one) are off for it.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: {
    files: ['**/planted.ts'],
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
});

async function layerMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.filter((message) => message.ruleId === 'inferlab/layers').map((message) => message.message);
}

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
