import type { Race, RaceLane } from '../../shared/race';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { uint32View } from '../store/request-columns';
import type { RunStore } from '../store/run-store';
import { decodeChunkOffsets, type RequestRow, type RunRow } from '../store/run-rows';

export const RACE_LANES = { min: 2, max: 4 } as const;

/** `RUN` or `RUN:SEQ`: a run by id or prefix, and one of its requests (its first measured success when none is named). */
function parseRef(ref: string): { run: string; seq: number | null } {
  const match = /^([^:]+)(?::(\d+))?$/.exec(ref.trim());
  if (!match) throw new AppError(ErrorCode.InvalidInput, `"${ref}" is not RUN or RUN:SEQ (a run id or prefix, and a request's seq)`);
  return { run: match[1]!, seq: match[2] === undefined ? null : Number(match[2]) };
}

function chosenRequest(runs: RunStore, run: RunRow, seq: number | null, ref: string): RequestRow {
  const row = runs.request(run.id, seq);
  if (row) return row;
  throw seq === null
    ? new AppError(ErrorCode.InvalidInput, `${ref}: run ${run.id.slice(0, 8)} has no successful streamed request to race`)
    : new AppError(ErrorCode.NotFound, `${ref}: run ${run.id.slice(0, 8)} has no request ${seq}`);
}

/** Where a run was an experiment's window, its condition and window: the lane is named by the condition. */
export type WindowOfRun = (runId: string) => { condition: string; window: number } | undefined;

/** One stored request as a lane: its chunk times, and its answer cut at each chunk where the run kept the text and the cuts. */
export function laneOf(run: RunRow, row: RequestRow, windowOfRun: WindowOfRun = () => undefined): RaceLane {
  const offsets = decodeChunkOffsets(row.chunk_offsets);
  const lengths = row.chunk_answer_chars ? Array.from(uint32View(row.chunk_answer_chars)) : null;
  const text = row.output_text;
  const textless =
    run.private === 1
      ? 'a private run keeps no text: token ticks only'
      : text === null
        ? 'this request kept no answer text: token ticks only'
        : lengths === null || lengths.length !== offsets.length
          ? 'stored before each chunk’s text was kept: token ticks only'
          : null;
  let position = 0;
  const chunks = offsets.map((atMs, index) => {
    if (textless !== null) return { atMs, text: '' };
    const piece = text!.slice(position, position + lengths![index]!);
    position += lengths![index]!;
    return { atMs, text: piece };
  });
  const window = windowOfRun(run.id);
  return {
    label: window
      ? `${window.condition} · window ${window.window + 1} · ${run.id.slice(0, 8)}:${row.seq}`
      : `${run.model_ref ?? 'endpoint'} · ${run.id.slice(0, 8)}:${row.seq}`,
    runId: run.id,
    seq: row.seq,
    chunks,
    ttftMs: row.ttft_ms,
    endMs: row.e2e_ms,
    outputTokens: row.output_tokens,
    textless,
  };
}

/** Stored requests as lanes of one race, each replayed at its own recorded pace. */
export function raceLanes(runs: RunStore, refs: readonly string[], windowOfRun?: WindowOfRun): Race {
  if (refs.length < RACE_LANES.min || refs.length > RACE_LANES.max)
    throw new AppError(ErrorCode.InvalidInput, `a race has ${RACE_LANES.min} to ${RACE_LANES.max} lanes, got ${refs.length}`);
  const lanes = refs.map((ref) => {
    const { run: id, seq } = parseRef(ref);
    const run = runs.findRun(id);
    if (!run) throw new AppError(ErrorCode.NotFound, `${ref}: no run ${id}`);
    return laneOf(run, chosenRequest(runs, run, seq, ref), windowOfRun);
  });
  return {
    lanes,
    note: 'Replayed from stored runs: each lane plays at the pace its tokens arrived when it was measured, so lanes that ran at different times do not slow each other.',
  };
}
