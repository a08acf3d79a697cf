import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../shared/errors';
import { exitStatusFor, toErrorShape } from './core/errors';
import { didYouMean } from './core/closest-name';
import { orphanWatchdog } from './core/orphan-watchdog';
import { projectRoot, secureAppDirs } from './core/paths';
import type { CommandHandler } from './cli/args';
import { commandHelp, helpTopic, wantsHelp } from './cli/help';
import { experimentOverviewLines } from './cli/kinds/registry';
import { escapeTerminalOutput } from './cli/terminal-text';
import { prestartWorkloadParser } from './services/parser-warmup';

const USAGE = `Usage: inferlab <command> [options]

Commands:
  doctor [--json] [--db PATH]                 what works, what is missing, and how to fix it
  setup [--force] [--backend cpu|cuda|vulkan|metal]
                                              build or locate llama.cpp, make the demo models
  demo [--repeats N] [--requests N] [--out DIR] [--db PATH] [--json]
                                              the full demo: quantization and warm/cold experiments on the demo models, with reports
  demo --quick [--model MODEL] [--max-tokens N]
                                              serve a model, measure one streamed completion, store it
  demo --capacity [--percentile 90]           the demo model's capacity under a p90 TTFT limit, in a few minutes
  server start --model MODEL [--profile NAME] [--set FIELD=VALUE ...] [--json]
                                              run llama-server until Ctrl-C (JSON line per state change)
  server profile list|show NAME|save NAME [--from NAME] [--set ...]|delete NAME
  models scan [DIR|FILE ...] [--json]         GGUF models with metadata; invalid files with the reason
  models quantize SRC --to Q8_0,Q4_K_M [--out DIR]
  run --workload FILE|NAME (--model MODEL | --endpoint URL) [load] [--slo ttft=MS,tpot=MS,e2e=MS] [--private] [--json]
      load: --concurrency N | --rate R [--burstiness B] [--max-outstanding N] [--shards N]; --requests N | --duration S; --warmup N
  run --trace FILE.jsonl --model MODEL [--trace-speed X] [--trace-window START:END]
                                              replay a Mooncake-style trace at its own timing, shared blocks token-identical
  runs list [--limit N]|show ID|delete ID     stored runs
  compare RUN_ID RUN_ID ...                   runs side by side: each metric's change with its interval and verdict
  history --metric tpot_ms:p50 [--model M] [--workload W]
                                              a metric across engine builds, per comparable configuration
  export ID --out DIR                         manifest.json, summary.json, requests.jsonl, CSVs, telemetry
  import DIR                                  an exported run folder back into the database, under its own id
${experimentOverviewLines().join('\n')}
  check --baseline RUN_OR_EXPERIMENT [--engine PATH] [--set F=V] [--interleave] [--run ID]
                                              regression gate: exit 1 when slower beyond --margin
  experiments list|show ID                    stored experiments; one's tables again
  report EXPERIMENT_ID --out FILE.html        a self-contained HTML report
  decide EXPERIMENT_ID --choose CONDITION --reason TEXT [--by NAME]   record a decision; decisions [--json] lists them
  serve [--host 127.0.0.1] [--port N]         the UI in a browser (prints its URL)
  app                                         open the desktop app (needs Electron's binary)

  help [COMMAND]                              this overview, or one command's usage with examples
  completion bash|zsh                         a shell completion script: source <(inferlab completion bash)

Every command and subcommand takes -h/--help (its usage, nothing run); --version prints the version.
With --json, a failure is one document on stdout: {"error":{"code":...,"message":...}}.
MODEL is a GGUF path or demo:f16, demo:q8_0, demo:q4_k_m.
Exit status: 0 success, 2 invalid input or usage, 1 runtime failure.`;

/** Each command's code is loaded only when it runs: help and usage errors load none of them. */
const COMMANDS: Record<string, () => Promise<CommandHandler>> = {
  doctor: async () => (await import('./cli/commands/doctor')).doctorCommand,
  setup: async () => (await import('./cli/commands/setup')).setupCommand,
  demo: async () => (await import('./cli/commands/demo')).demoCommand,
  server: async () => (await import('./cli/commands/server')).serverCommand,
  models: async () => (await import('./cli/commands/models')).modelsCommand,
  run: async () => (await import('./cli/commands/run')).runCommand,
  runs: async () => (await import('./cli/commands/runs')).runsCommand,
  experiments: async () => (await import('./cli/commands/experiments')).experimentsCommand,
  export: async () => (await import('./cli/commands/runs')).exportCommand,
  import: async () => (await import('./cli/commands/runs')).importCommand,
  compare: async () => (await import('./cli/commands/compare')).compareCommand,
  race: async () => (await import('./cli/commands/race')).raceCommand,
  check: async () => (await import('./cli/commands/check')).checkCommand,
  history: async () => (await import('./cli/commands/history')).historyCommand,
  experiment: async () => (await import('./cli/commands/experiment')).experimentCommand,
  report: async () => (await import('./cli/commands/experiment')).reportCommand,
  decide: async () => (await import('./cli/commands/experiment')).decideCommand,
  decisions: async () => (await import('./cli/commands/experiment')).decisionsCommand,
  serve: async () => (await import('./cli/commands/serve')).serveCommand,
  app: async () => (await import('./cli/commands/app')).appCommand,
  completion: async () => (await import('./cli/commands/completion')).completionCommand,
};

/**
 * Whether this command line reads a workload file before anything else: it then gets its parser thread
 * while its code loads. `check` measures again unless given stored runs; a live `race` runs each lane
 * as a `run` of its own.
 */
function readsWorkload(command: string, rest: readonly string[]): boolean {
  if (command === 'check') return !rest.some((arg) => arg === '--run' || arg.startsWith('--run='));
  return command === 'run' || command === 'experiment' || command === 'demo';
}

function packageVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

/** Under --json a failure is one JSON document on stdout too, so scripts need not parse stderr. */
function reportFailure(command: string, subcommand: string | undefined, error: unknown, json: boolean): void {
  const shape = toErrorShape(error);
  const usageHint =
    exitStatusFor(error) === 2 && COMMANDS[command] ? `\nRun "inferlab ${helpTopic(command, subcommand)} --help" for usage.` : '';
  process.stderr.write(`inferlab ${command}: ${shape.message}${usageHint}\n`);
  if (json) process.stdout.write(`${JSON.stringify({ error: shape })}\n`);
}

export async function main(argv: string[]): Promise<number> {
  // Stored names, model metadata and endpoint errors are printed by many commands: none may reach the terminal's controls.
  escapeTerminalOutput(process.stdout);
  escapeTerminalOutput(process.stderr);
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-V') {
    const { versionInfo } = await import('./services/version-info');
    const version = versionInfo();
    process.stdout.write(
      `inferlab ${packageVersion()}\nllama.cpp ${version.engineCommit ?? 'not fetched yet'} (${version.engineSource})\ndatabase schema ${version.schemaVersion}\n`,
    );
    return 0;
  }
  if (!command || command === '--help' || command === '-h' || (command === 'help' && rest.length === 0)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const json = rest.includes('--json');
  if (command === 'help' || wantsHelp(rest)) {
    const [name, subcommand] = command === 'help' ? rest : [command, rest[0]];
    const help = commandHelp(name!, subcommand);
    if (help) {
      process.stdout.write(`${help}\n`);
      return 0;
    }
  }
  const load = COMMANDS[command];
  if (!load) {
    const name = command === 'help' ? rest[0]! : command;
    const hint = didYouMean(name, Object.keys(COMMANDS));
    const message = `Unknown command "${name}"${hint}`;
    process.stderr.write(`${message}${hint ? '' : '.'}\n\n${USAGE}\n`);
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: ErrorCode.Usage, message } })}\n`);
    return 2;
  }
  secureAppDirs();
  if (readsWorkload(command, rest)) prestartWorkloadParser();
  const controller = new AbortController();
  // The first signal stops gracefully (servers get their grace period, finished requests are
  // kept); a second one means now: every server group is killed before this process exits.
  const interrupt = (name: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      controller.abort();
      return;
    }
    process.stderr.write(`${name} again: stopping servers now\n`);
    orphanWatchdog.killAllNow();
    process.exit(130);
  };
  const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const name of STOP_SIGNALS) process.on(name, interrupt);
  try {
    const handler = await load();
    return await handler(rest, controller.signal);
  } catch (error) {
    reportFailure(command, rest[0], error, json);
    if (toErrorShape(error).code === ErrorCode.Internal && error instanceof Error && process.env.INFERLAB_DEBUG)
      process.stderr.write(`${error.stack}\n`);
    return controller.signal.aborted && exitStatusFor(error) !== 2 ? 130 : exitStatusFor(error);
  } finally {
    for (const name of STOP_SIGNALS) process.off(name, interrupt);
  }
}
