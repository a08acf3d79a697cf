import fs from 'node:fs';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { LIVE_RACE_LIMITS, type LiveRaceRequest } from '../../../shared/contract/specs';
import { ErrorCode } from '../../../shared/errors';
import { BUNCHED_RATE, finishOrder, laneAt, raceItemOf, raceLengthMs, type Race, type RaceLane } from '../../../shared/race';
import { raceHtml } from '../../../shared/race-html';
import { AppError } from '../../core/errors';
import { shellAccess } from '../../services/access';
import { parseOptions, type CommandHandler } from '../args';
import { openCliServices } from '../service-context';
import { RACE_USAGE as USAGE } from '../usage';

const FRAME_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The lanes' events in time order (first token, finish), each once, for a terminal that cannot redraw. */
function plainEvents(lanes: readonly RaceLane[]): { atMs: number; line: (at: number) => string }[] {
  const events = lanes.flatMap((lane, index) => [
    ...(lane.ttftMs === null
      ? []
      : [{ atMs: lane.ttftMs, line: () => `lane ${index + 1} ${lane.label}: first token at ${lane.ttftMs!.toFixed(0)} ms` }]),
    ...(lane.endMs === null
      ? []
      : [
          {
            atMs: lane.endMs,
            line: () => {
              const state = laneAt(lane, lane.endMs!);
              const text = lane.textless
                ? `(${lane.textless})`
                : JSON.stringify(state.text.length > 120 ? `${state.text.slice(0, 117)}...` : state.text);
              return `lane ${index + 1} ${lane.label}: finished at ${lane.endMs!.toFixed(0)} ms, ${state.tokens} tokens, ${state.bunched ? BUNCHED_RATE : `${state.tokensPerS === null ? '—' : state.tokensPerS.toFixed(1)} tok/s`}: ${text}`;
            },
          },
        ]),
  ]);
  return events.sort((a, b) => a.atMs - b.atMs);
}

function orderLine(race: Race): string {
  return `order: ${finishOrder(race.lanes)
    .map((index, place) => {
      const lane = race.lanes[index]!;
      return `${place + 1}. lane ${index + 1} ${lane.label} ${lane.endMs === null ? '(did not finish)' : `${lane.endMs.toFixed(0)} ms`}`;
    })
    .join('; ')}`;
}

/** Plain lines as the race reaches them, at the recorded pace divided by `speed`. */
async function playPlain(race: Race, speed: number, write: (text: string) => void): Promise<void> {
  write(`${race.note}\n`);
  let clock = 0;
  for (const event of plainEvents(race.lanes)) {
    await sleep((event.atMs - clock) / speed);
    clock = event.atMs;
    write(`${event.line(event.atMs)}\n`);
  }
  write(`${orderLine(race)}\n`);
}

/** A column of `width` characters per lane: its header, its figures, and the last lines of its text, redrawn in place. */
export function raceFrame(race: Race, atMs: number, width: number, height: number): string[] {
  const column = Math.max(16, Math.floor((width - (race.lanes.length - 1) * 3) / race.lanes.length));
  const fit = (text: string) => (text.length > column ? `${text.slice(0, column - 1)}…` : text.padEnd(column));
  const columns = race.lanes.map((lane) => {
    const state = laneAt(lane, atMs);
    // The finish mark first, so a narrow column keeps it.
    const figures = `${state.finished ? 'done · ' : ''}${state.started ? `TTFT ${lane.ttftMs!.toFixed(0)} ms` : 'waiting'} · ${state.tokens} tok${state.tokensPerS === null ? (state.bunched ? ' · bunched' : '') : ` · ${state.tokensPerS.toFixed(0)} tok/s`}`;
    const body = lane.textless ? '▮'.repeat(state.chunks) : state.text.replace(/\s+/g, ' ');
    const lines: string[] = [];
    for (let start = 0; start < body.length; start += column) lines.push(body.slice(start, start + column));
    return [fit(lane.label), fit(figures), ...Array.from({ length: height }, (_, row) => fit(lines.slice(-height)[row] ?? ''))];
  });
  return columns[0]!.map((_, row) => columns.map((lines) => lines[row]).join(' │ '));
}

async function playInPlace(race: Race, speed: number): Promise<void> {
  const width = process.stdout.columns ?? 100;
  const height = Math.max(4, Math.min(16, (process.stdout.rows ?? 24) - 8));
  const length = raceLengthMs(race.lanes);
  process.stdout.write(`${race.note}\n`);
  const started = performance.now();
  let drawn = 0;
  for (;;) {
    const atMs = Math.min(length, (performance.now() - started) * speed);
    const lines = [`clock ${(atMs / 1000).toFixed(2)} s`, ...raceFrame(race, atMs, width, height)];
    // Back to the top of the previous frame, then over it line by line.
    process.stdout.write(`${drawn ? `\x1b[${drawn}F` : ''}${lines.map((line) => `\x1b[2K${line}`).join('\n')}\n`);
    drawn = lines.length;
    if (atMs >= length) break;
    await sleep(FRAME_MS);
  }
  process.stdout.write(`${orderLine(race)}\n`);
}

const DEFAULT_RACE_PROMPT = 'Explain in three sentences why the sky is blue.';

/** Measures the lanes through the runs service (one after another, or together), with its lines on stderr. */
async function runLanes(request: LiveRaceRequest, db: string | undefined, signal: AbortSignal): Promise<Race> {
  const container = await openCliServices(db, shellAccess());
  try {
    return await container.runs.raceLive(request, { signal, onStatus: (line) => process.stderr.write(`${line}\n`) });
  } finally {
    await container.dispose();
  }
}

/** `--lane-set N:FIELD=VALUE`: a setting for lane N alone (1-based, in --model order), after every lane's --set. */
function laneSettings(entries: readonly string[], lanes: number): Map<number, string[]> {
  const own = new Map<number, string[]>();
  for (const entry of entries) {
    const match = /^(\d+):(.+=.*)$/.exec(entry);
    const lane = match ? Number(match[1]) : 0;
    if (!match || lane < 1 || lane > lanes)
      throw new AppError(
        ErrorCode.Usage,
        `--lane-set expects N:FIELD=VALUE with N a lane from 1 to ${lanes}, got "${entry}"\n\nUsage: ${USAGE}`,
      );
    own.set(lane - 1, [...(own.get(lane - 1) ?? []), match[2]!]);
  }
  return own;
}

/** `--item WORKLOAD#ID`: the workload (a built-in name or a file) and the item's id. */
function itemOf(text: string): { workload: string; id: string } {
  const item = raceItemOf(text);
  if (!item) throw new AppError(ErrorCode.Usage, `--item takes WORKLOAD#ID (a workload's name or file, and an item's id), got "${text}"`);
  return item;
}

function liveRaceOf(values: {
  model?: string[];
  prompt?: string;
  item?: string;
  'max-tokens'?: string;
  profile?: string;
  set?: string[];
  'lane-set'?: string[];
  together?: boolean;
}): LiveRaceRequest {
  const models = values.model ?? [];
  const { lanes, promptChars, maxTokens: mostTokens } = LIVE_RACE_LIMITS;
  if (models.length < lanes.min || models.length > lanes.max)
    throw new AppError(ErrorCode.Usage, `a live race needs two to four --model, got ${models.length}\n\nUsage: ${USAGE}`);
  if (values.prompt !== undefined && values.item !== undefined)
    throw new AppError(ErrorCode.Usage, `race --prompt or --item, not both\n\nUsage: ${USAGE}`);
  const prompt = values.prompt ?? DEFAULT_RACE_PROMPT;
  if (prompt.trim() === '' || prompt.length > promptChars)
    throw new AppError(ErrorCode.Usage, `--prompt must be 1 to ${promptChars} characters, got ${prompt.length}`);
  const maxTokens = values['max-tokens'] === undefined ? 64 : Number(values['max-tokens']);
  if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > mostTokens)
    throw new AppError(ErrorCode.Usage, `--max-tokens must be a whole number from 1 to ${mostTokens}, got "${values['max-tokens']}"`);
  const own = laneSettings(values['lane-set'] ?? [], models.length);
  return {
    lanes: models.map((model, index) => ({
      model,
      profileName: values.profile ?? 'default',
      settings: [...(values.set ?? []), ...(own.get(index) ?? [])],
    })),
    ...(values.item === undefined ? { prompt } : { item: itemOf(values.item) }),
    maxTokens,
    together: values.together === true,
  };
}

export const raceCommand: CommandHandler = async (args, signal) => {
  const { values, positionals } = parseOptions(
    args,
    {
      db: { type: 'string' },
      json: { type: 'boolean' },
      html: { type: 'string' },
      speed: { type: 'string' },
      model: { type: 'string', multiple: true },
      prompt: { type: 'string' },
      item: { type: 'string' },
      'max-tokens': { type: 'string' },
      profile: { type: 'string' },
      set: { type: 'string', multiple: true },
      'lane-set': { type: 'string', multiple: true },
      together: { type: 'boolean' },
      experiment: { type: 'string' },
    },
    USAGE,
    true,
  );
  if (values.experiment !== undefined && (positionals.length > 0 || values.model !== undefined))
    throw new AppError(ErrorCode.Usage, `--experiment races that experiment's conditions: name no runs and no --model\n\nUsage: ${USAGE}`);
  const live = values.model !== undefined;
  if (live && positionals.length > 0)
    throw new AppError(ErrorCode.Usage, `race either stored requests (RUN[:SEQ]) or --model lanes, not both\n\nUsage: ${USAGE}`);
  if (!live) {
    const given = (['prompt', 'item', 'max-tokens', 'profile', 'set', 'lane-set', 'together'] as const).filter(
      (flag) => values[flag] !== undefined,
    );
    if (given.length > 0) throw new AppError(ErrorCode.Usage, `--${given[0]} is for a live race (--model lanes) only\n\nUsage: ${USAGE}`);
    if (values.experiment === undefined && (positionals.length < 2 || positionals.length > 4))
      throw new AppError(ErrorCode.Usage, `race needs two to four requests (RUN or RUN:SEQ), got ${positionals.length}\n\nUsage: ${USAGE}`);
  }
  const speed = values.speed === undefined ? 1 : Number(values.speed);
  if (!Number.isFinite(speed) || speed <= 0 || speed > 100)
    throw new AppError(ErrorCode.Usage, `--speed must be a number above 0 and at most 100 (2 plays twice as fast), got "${values.speed}"`);
  const race = live ? await runLanes(liveRaceOf(values), values.db, signal) : await storedRace(positionals, values.db, values.experiment);
  if (values.html) {
    fs.writeFileSync(values.html, raceHtml(race));
    process.stderr.write(`wrote ${values.html}: the race as one HTML file (open it in a browser; space or R plays it)\n`);
  }
  if (values.json) process.stdout.write(`${JSON.stringify(race, null, 2)}\n`);
  else if (!values.html)
    await (process.stdout.isTTY ? playInPlace(race, speed) : playPlain(race, speed, (text) => process.stdout.write(text)));
  return 0;
};

async function storedRace(refs: string[], db: string | undefined, experimentId: string | undefined): Promise<Race> {
  const container = await openCliServices(db, shellAccess());
  try {
    if (experimentId === undefined) return await container.services.runs.race(refs);
    const experiment = await container.services.experiments.get(experimentId);
    if (!experiment) throw new AppError(ErrorCode.NotFound, `no experiment ${experimentId}`);
    return await container.services.runs.race(experimentLanes(experiment));
  } finally {
    await container.dispose();
  }
}

/** An experiment's conditions as lanes: the first window of each of its first four conditions that ran one. */
export function experimentLanes(experiment: ExperimentResult): string[] {
  const firstRuns = experiment.conditions.flatMap((condition) => condition.run_ids.slice(0, 1));
  if (firstRuns.length < 2)
    throw new AppError(
      ErrorCode.InvalidInput,
      `experiment ${experiment.experiment_id.slice(0, 8)} has fewer than two conditions with a window to race`,
    );
  if (firstRuns.length > 4) process.stderr.write(`the race has four lanes: the first four of ${firstRuns.length} conditions race\n`);
  return firstRuns.slice(0, 4);
}
