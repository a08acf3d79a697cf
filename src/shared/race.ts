/**
 * A race: stored requests played side by side, each at the pace its tokens arrived. Shared by the
 * CLI, the app and the exported HTML, so every face plays the same lanes the same way.
 */

/** One lane: a stored request, its chunks as they arrived (ms after its send) and the answer text each added. */
export interface RaceLane {
  label: string;
  runId: string;
  seq: number;
  chunks: { atMs: number; text: string }[];
  /** First chunk and finish, ms after the send; null where the request had none (a failed one). */
  ttftMs: number | null;
  endMs: number | null;
  /** The server's count of output tokens, or the chunks where it gave none. */
  outputTokens: number | null;
  /** Why the lane shows token ticks instead of text (a private run, a run stored before per-chunk text was kept); null when it has text. */
  textless: string | null;
}

export interface Race {
  lanes: RaceLane[];
  /** How the lanes were measured, in one line: replayed from stored runs, each at its recorded pace. */
  note: string;
}

/** What a lane shows `atMs` after the start. */
export interface LaneState {
  text: string;
  chunks: number;
  /** Output tokens so far: the request's token count shared out over its chunks as they arrive. */
  tokens: number;
  /** Tokens per second of decoding so far (after the first token), null before two tokens and for a bunched lane. */
  tokensPerS: number | null;
  /**
   * The lane's tokens after the first reached the client under 0.1 ms apart on average (the run summary's own
   * BUNCHED TOKENS floor): they were held up on the way and arrived together, so no decode rate can be read
   * from them. Shown once two tokens have arrived.
   */
  bunched: boolean;
  started: boolean;
  finished: boolean;
}

/** What a lane says in place of its rate where its tokens arrived bunched (LaneState.bunched). */
export const BUNCHED_RATE = 'no rate (tokens arrived bunched)';

export function laneAt(lane: RaceLane, atMs: number): LaneState {
  let chunks = 0;
  let text = '';
  for (const chunk of lane.chunks) {
    if (chunk.atMs > atMs) break;
    chunks += 1;
    text += chunk.text;
  }
  const total = lane.chunks.length;
  const laneTokens = lane.outputTokens ?? total;
  const tokens = total === 0 ? 0 : Math.round((laneTokens * chunks) / total);
  const decodingMs = lane.ttftMs === null ? 0 : Math.min(atMs, lane.endMs ?? atMs) - lane.ttftMs;
  // A literal, not an import: this function's source is placed in the exported race's page.
  const bunched = lane.ttftMs !== null && lane.endMs !== null && laneTokens > 1 && (lane.endMs - lane.ttftMs) / (laneTokens - 1) < 0.1;
  return {
    text,
    chunks,
    tokens,
    tokensPerS: !bunched && tokens > 1 && decodingMs > 0 ? ((tokens - 1) / decodingMs) * 1000 : null,
    bunched: bunched && tokens > 1,
    started: lane.ttftMs !== null && atMs >= lane.ttftMs,
    finished: lane.endMs !== null && atMs >= lane.endMs,
  };
}

/** The lanes' indexes in the order they finished; a lane that never finished comes last. */
export function finishOrder(lanes: readonly RaceLane[]): number[] {
  return lanes
    .map((lane, index) => ({ index, end: lane.endMs ?? Number.POSITIVE_INFINITY }))
    .sort((a, b) => a.end - b.end || a.index - b.index)
    .map(({ index }) => index);
}

/** When the last lane is done: the race's length. */
/**
 * A replay's clock, read once a frame: the frame's own time plus half the frame interval (measured as
 * the frames come, a missed frame counted at most once), so each token is drawn on the frame nearest
 * its recorded time rather than on the first after it: half a frame early or late at most instead of
 * up to a whole frame late. Uses only its arguments and built-ins: its source is placed in the
 * exported race's page as well.
 */
export function nearestFrameClock(): (frameTimeMs: number) => number {
  let previous: number | null = null;
  let intervalMs = 1000 / 60;
  return (frameTimeMs) => {
    if (previous !== null) intervalMs = 0.8 * intervalMs + 0.2 * Math.min(100, Math.max(0, frameTimeMs - previous));
    previous = frameTimeMs;
    return frameTimeMs + intervalMs / 2;
  };
}

export function raceLengthMs(lanes: readonly RaceLane[]): number {
  return Math.max(0, ...lanes.map((lane) => lane.endMs ?? lane.chunks.at(-1)?.atMs ?? 0));
}

/** `WORKLOAD#ID` (a workload's name or file, and an item's id, split at the last #), or null where the text is not one. */
export function raceItemOf(text: string): { workload: string; id: string } | null {
  const at = text.lastIndexOf('#');
  if (at <= 0 || at === text.length - 1) return null;
  return { workload: text.slice(0, at).trim(), id: text.slice(at + 1).trim() };
}
