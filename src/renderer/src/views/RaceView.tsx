import { useCallback, useEffect, useRef, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import { BUNCHED_RATE, finishOrder, laneAt, nearestFrameClock, raceLengthMs, type Race } from '../../../shared/race';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';
import { routeOf } from '../state/route';
import { useAppStore } from '../state/store';
import { LiveRaceForm } from './LiveRaceForm';

/**
 * Stored requests raced side by side, each at the pace it was measured (`#/race?lanes=RUN:SEQ,…`).
 * Space or R plays from the start, 1–4 show or hide a lane; presenter mode takes the whole screen
 * (where the browser allows it; else the window, and F11 the rest) with large type, and no control
 * shows while the race runs.
 */
export function RaceView({ client }: { client: AppServices }) {
  const lanesParam = useAppStore((state) => (state.route.view === 'race' ? (state.route.params.lanes ?? '') : ''));
  const refs = lanesParam.split(',').filter(Boolean);
  const [race, setRace] = useState<Race | null>(null);
  const [atMs, setAtMs] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [hidden, setHidden] = useState<number[]>([]);
  const [presenter, setPresenter] = useState(false);
  const [fullScreen, setFullScreen] = useState(false);
  /** Why the browser did not give presenter mode the whole screen, said beside the F11 hint. */
  const [fullScreenRefused, setFullScreenRefused] = useState<string | null>(null);
  const { error, run } = useAction();
  const frame = useRef<number | null>(null);

  // A race just measured here is shown as it came (its note says how it ran); any other is read from the store.
  const measured = useRef<{ lanes: string; race: Race } | null>(null);
  useEffect(() => {
    if (measured.current?.lanes === lanesParam) return setRace(measured.current.race);
    setRace(null);
    if (refs.length >= 2) void run(() => client.runs.race(refs), setRace);
  }, [client, lanesParam]);
  const onRaced = (raced: Race) => {
    const lanes = raced.lanes.map((lane) => `${lane.runId}:${lane.seq}`).join(',');
    measured.current = { lanes, race: raced };
    setAtMs(0);
    useAppStore.getState().navigate(routeOf('race', null, { lanes }));
  };

  const play = useCallback(() => {
    if (!race) return;
    if (frame.current !== null) cancelAnimationFrame(frame.current);
    const length = raceLengthMs(race.lanes);
    const started = performance.now();
    const clock = nearestFrameClock();
    setPlaying(true);
    const tick = (now: number) => {
      const at = Math.min(length, clock(now) - started);
      setAtMs(at);
      if (at < length) frame.current = requestAnimationFrame(tick);
      else {
        frame.current = null;
        setPlaying(false);
      }
    };
    frame.current = requestAnimationFrame(tick);
  }, [race]);
  useEffect(() => () => void (frame.current !== null && cancelAnimationFrame(frame.current)), []);

  // Presenter mode asks the browser for the whole screen; where it refuses (a window that may not), the
  // view still fills the window and says F11 does the rest. Escape leaves full screen, not the mode.
  useEffect(() => {
    const onChange = () => setFullScreen(document.fullscreenElement !== null);
    document.addEventListener('fullscreenchange', onChange);
    return () => document.removeEventListener('fullscreenchange', onChange);
  }, []);
  const togglePresenter = () => {
    const entering = !presenter;
    setPresenter(entering);
    setFullScreenRefused(entering && !document.fullscreenEnabled ? 'this window may not fill the screen' : null);
    if (entering && document.fullscreenEnabled)
      void document.documentElement.requestFullscreen().then(undefined, (refusal: Error) => setFullScreenRefused(refusal.message));
    else if (!entering && document.fullscreenElement) void document.exitFullscreen();
  };

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey || (event.target as HTMLElement | null)?.closest('input, select, textarea'))
        return;
      if (event.key === ' ' || event.key === 'r' || event.key === 'R') {
        event.preventDefault();
        play();
      } else if (/^[1-4]$/.test(event.key)) {
        const index = Number(event.key) - 1;
        setHidden((current) => (current.includes(index) ? current.filter((lane) => lane !== index) : [...current, index]));
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [play]);

  if (refs.length < 2)
    return (
      <section>
        <h1>Race</h1>
        <p className="empty">To replay stored runs: select two to four in Runs, compare them, then press Race. Or measure a race now:</p>
        <LiveRaceForm client={client} onRaced={onRaced} />
      </section>
    );
  const length = race ? raceLengthMs(race.lanes) : 0;
  const done = race !== null && !playing && atMs >= length && length > 0;
  return (
    <section aria-labelledby="race-title" className={presenter ? 'race presenter' : 'race'}>
      <h1 id="race-title">Race</h1>
      <ErrorBox error={error} />
      {!race && !error && <p>Loading the lanes…</p>}
      {race && (
        <>
          <div className={`toolbar${presenter && playing ? ' hidden-while-racing' : ''}`}>
            <span className="race-clock" data-testid="race-clock">
              {(atMs / 1000).toFixed(2)} s
            </span>
            <button type="button" onClick={play}>
              {atMs > 0 ? 'Replay (R)' : 'Start (space)'}
            </button>
            <button type="button" onClick={togglePresenter}>
              {presenter ? 'Leave presenter mode' : 'Presenter mode'}
            </button>
            {!presenter && <a href="#/race">New race</a>}
            <small data-testid="race-keys">
              {presenter && !fullScreen ? `F11 fills the screen${fullScreenRefused ? ` (${fullScreenRefused})` : ''}; ` : ''}1–4 show or
              hide a lane
            </small>
          </div>
          <p className="note">{race.note}</p>
          <RaceBoard race={race} atMs={atMs} hidden={hidden} done={done} />
        </>
      )}
    </section>
  );
}

/** The lanes shown (1–4 hide one) at `atMs`, and the finishing order once the race is over. */
function RaceBoard({ race, atMs, hidden, done }: { race: Race; atMs: number; hidden: number[]; done: boolean }) {
  const shown = race.lanes.map((lane, index) => ({ lane, index })).filter(({ index }) => !hidden.includes(index));
  return (
    <>
      <div
        className="race-lanes"
        data-testid="race-lanes"
        style={{ gridTemplateColumns: `repeat(${Math.max(1, shown.length)}, minmax(0, 1fr))` }}
      >
        {shown.map(({ lane, index }) => {
          const state = laneAt(lane, atMs);
          return (
            <article
              key={`${lane.runId}:${lane.seq}`}
              className={state.finished ? 'race-lane done' : 'race-lane'}
              aria-label={`lane ${index + 1}`}
            >
              <h2>
                {index + 1}. {lane.label}
              </h2>
              <p className="race-figures">
                {state.started ? `TTFT ${lane.ttftMs!.toFixed(0)} ms` : 'waiting for the first token'} · {state.tokens} tokens
                {state.tokensPerS === null ? (state.bunched ? ` · ${BUNCHED_RATE}` : '') : ` · ${state.tokensPerS.toFixed(1)} tok/s`}
                {state.finished ? ` · finished at ${lane.endMs!.toFixed(0)} ms` : ''}
              </p>
              <p className="race-text">{lane.textless ? '▮'.repeat(state.chunks) : state.text}</p>
              {lane.textless && <small className="note">{lane.textless}</small>}
            </article>
          );
        })}
      </div>
      {done && (
        <ol className="race-order" data-testid="race-order" aria-label="finish order">
          {finishOrder(race.lanes).map((index) => {
            const lane = race.lanes[index]!;
            return (
              <li key={index}>
                {lane.label} {lane.endMs === null ? '(did not finish)' : `${lane.endMs.toFixed(0)} ms`}
              </li>
            );
          })}
        </ol>
      )}
    </>
  );
}
