import type { MethodName } from '../../shared/contract';
import { KIND_TEXT_ENTRIES } from './kinds/registry';

/**
 * What each CLI command calls in the service contract, keyed like the help entries
 * ("command" or "command subcommand"). Checked by test/unit/command-contract.test.ts: every
 * command is here, every method named exists, and every contract method is either used here
 * or listed in `NOT_ON_THE_CLI` with the reason.
 */
export const COMMAND_CALLS: Record<string, { calls: MethodName[] } | { face: string }> = {
  // doctor calls the report directly, not through a service container: it must answer when the database cannot open.
  doctor: { calls: ['doctor.report'] },
  setup: { calls: ['engine.setup'] },
  demo: { calls: ['demo.firstRequest', 'experiments.start', 'experiments.report'] },
  'server start': { calls: ['servers.profiles', 'servers.start', 'servers.stop'] },
  'server profile': { calls: ['servers.profiles', 'servers.saveProfile', 'servers.deleteProfile'] },
  'server explain': { calls: ['servers.explainLog'] },
  'models scan': { calls: ['models.scan'] },
  'models search': { calls: ['models.search'] },
  'models plan': { calls: ['models.plan'] },
  'models pull': { calls: ['models.pull'] },
  'models quantize': { calls: ['models.quantize'] },
  run: { calls: ['runs.start'] },
  'runs list': { calls: ['runs.list'] },
  'runs show': { calls: ['runs.get'] },
  'runs delete': { calls: ['runs.remove'] },
  compare: { calls: ['runs.compare'] },
  race: { calls: ['runs.race', 'runs.startRace'] },
  check: { calls: ['runs.start'] },
  history: { calls: ['runs.history'] },
  export: { calls: ['runs.exportRun', 'runs.exportParquet'] },
  import: { calls: ['runs.importRun'] },
  // One "experiment KIND" command per kind in the registry: that is what makes the command exist.
  ...Object.fromEntries(
    KIND_TEXT_ENTRIES.map(([kind, text]) => [`experiment ${kind}`, { calls: text.calls ?? ['experiments.start', 'experiments.report'] }]),
  ),
  'experiments list': { calls: ['experiments.list'] },
  'experiments show': { calls: ['experiments.get'] },
  report: { calls: ['experiments.report'] },
  decide: { calls: ['experiments.decide'] },
  decisions: { calls: ['experiments.decisions'] },
  serve: { face: 'hosts the services for a browser' },
  app: { face: 'opens the desktop app, which hosts the services' },
  'completion bash': { face: 'prints a shell script from the command table' },
};

/** Contract methods the CLI has no command for, and why. */
export const NOT_ON_THE_CLI: Partial<Record<MethodName, string>> = {
  'settings.get': 'the CLI takes its settings from config.json and its flags; doctor prints where the data, database and engine are',
  'settings.update': "the config file is the CLI's settings: edit it, or use the Settings view",
  'models.quantTypes': 'models quantize --help names the common types; any type llama-quantize knows is taken',
  'runs.page': 'runs list --limit N prints the newest N; the UI pages through them with a search',
  'runs.validate': 'run checks its spec itself before it opens the database; the UI checks the form as it is filled in',
  'experiments.validate': 'experiment checks its spec itself when it starts; the UI checks the form as it is filled in',
  'tasks.cancel':
    'a CLI run, experiment, quantization, pull or setup is cancelled with Ctrl-C (its awaitable form takes the signal; a pull keeps the file in progress, to resume)',
  'tasks.list': "a CLI command's task lives as long as the command, which prints its progress",
  'models.cached': 'models pull lists where the files are, and pulling files already in the cache downloads nothing',
  'servers.list': 'a CLI server lives as long as its command, which prints its state',
  'servers.logs': 'server start prints the log tail when the server fails; the file is in the data folder',
  'servers.defaultProfile': 'server profile show default',
  'servers.validateProfile': 'server start and profile save validate the profile they are given',
  'workloads.list': 'run --workload takes a built-in name or a file; an unknown name is refused with the list of built-ins',
  'workloads.read': 'workload files are read from disk by the person at the shell',
  'workloads.validate': 'run validates its workload before it starts',
};
