import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import type {
  AppEvents,
  EventName,
  ExperimentTaskProgress,
  RaceTaskProgress,
  RunTaskProgress,
  SettingsInfo,
  TaskProgress,
  ToolTaskProgress,
} from '../../../shared/contract';
import type { ServerSnapshot } from '../../../shared/contract/server';
import type { TelemetryTick } from '../../../shared/contract/telemetry';
import { createDoctorSlice, type DoctorSlice } from './doctor-slice';
import { startingRunTask } from '../../../shared/tasks';

import { parseRoute, routeOf, type Route, type View } from './route';

export type { View } from './route';

/** One hour at 4 Hz: the live timeline keeps at most this many points, oldest dropped. */
export const TELEMETRY_CAPACITY = 4 * 3600;
const TTFT_CAPACITY = 50_000;

export interface LiveRun {
  job: RunTaskProgress | null;
  ttft: [number, number][];
  telemetry: TelemetryTick[];
}

interface UiSlice {
  view: View;
  /** The view with what it shows (a run, an experiment, a preset); mirrored in the URL fragment. */
  route: Route;
  navigate(route: Route): void;
  /** The name decisions are recorded under. */
  decidedBy: string;
  setDecidedBy(name: string): void;
  /** The profile the forms start with (Settings). */
  defaultProfile: string;
  /** Takes the saved settings: the name for decisions (unless one was typed here) and the default profile. */
  applySettings(settings: Pick<SettingsInfo, 'decisionName' | 'defaultProfile'>): void;
  theme: 'light' | 'dark';
  compareSelection: string[];
  setView(view: View): void;
  toggleTheme(): void;
  setCompareSelection(ids: string[]): void;
}

/** Lines of a server's log the view keeps; older ones stay in the log file. */
export const LOG_CAPACITY = 500;

interface LiveSlice {
  live: LiveRun;
  servers: Record<string, ServerSnapshot>;
  serverLogs: Record<string, string[]>;
  appendServerLog(serverId: string, lines: string[]): void;
  startJob(jobId: string): void;
  applyRunProgress(progress: RunTaskProgress): void;
  applyTelemetry(jobId: string, tick: TelemetryTick): void;
  applyServer(snapshot: ServerSnapshot): void;
}

/** Tasks other than the live run, by job id: experiments, quantizations, pulls and setup. */
interface TasksSlice {
  tasks: Record<string, OtherTask>;
  applyTask(progress: OtherTask): void;
}

type OtherTask = Exclude<TaskProgress, RunTaskProgress>;

/** The task `jobId` if it is of `kind`: each view reads only the tasks it started. */
export function taskOfKind<K extends OtherTask['kind']>(
  tasks: Record<string, OtherTask>,
  jobId: string | null | undefined,
  kind: K,
): TaskOfKind<K> | null {
  const task = jobId ? tasks[jobId] : undefined;
  return task?.kind === kind ? (task as TaskOfKind<K>) : null;
}

/** A tool task's kind is one of several ('quantize' | 'setup' | 'pull'), so it is picked by kind, not extracted. */
type TaskOfKind<K extends OtherTask['kind']> = K extends 'experiment'
  ? ExperimentTaskProgress
  : K extends 'race'
    ? RaceTaskProgress
    : ToolTaskProgress;

export type AppState = DoctorSlice & UiSlice & LiveSlice & TasksSlice;

const initialTheme = (): 'light' | 'dark' =>
  typeof window !== 'undefined' && window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';

/** Storage for the kept state where the browser's is missing. */
const processMemory = (() => {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
  };
})();

/** The route the address names when the app opens (a link, a reload): it is drawn first and wins over the one kept from last time. */
const addressRoute: Route | null = typeof window === 'undefined' || !window.location ? null : parseRoute(window.location.hash);

/** Kept across reloads (per origin): where the user was, the theme, and the runs picked for comparison. */
const persistence = {
  merge: (persisted: unknown, current: AppState): AppState => {
    const merged = { ...current, ...(persisted as Partial<AppState>) };
    return addressRoute ? { ...merged, route: addressRoute, view: addressRoute.view } : merged;
  },
  name: 'inferlab-ui',
  // Outside a browser (benchmarks, tests on Node) there is no localStorage: it is kept in memory, for this process only.
  storage: createJSONStorage(() => (typeof window !== 'undefined' && window.localStorage ? window.localStorage : processMemory)),
  partialize: (state: AppState) => ({
    view: state.view,
    route: state.route,
    theme: state.theme,
    compareSelection: state.compareSelection,
    decidedBy: state.decidedBy,
  }),
};

/** One store made of slices; services push whole snapshots and a slice replaces its part. */
export const useAppStore = create<AppState>()(
  persist(
    (set, get, api) => ({
      ...createDoctorSlice(set, get, api),
      view: addressRoute?.view ?? 'home',
      route: addressRoute ?? routeOf('home'),
      navigate: (route) => set({ route, view: route.view }),
      decidedBy: '',
      setDecidedBy: (decidedBy) => set({ decidedBy }),
      defaultProfile: 'default',
      applySettings: (settings) =>
        set((current) => ({ decidedBy: settings.decisionName || current.decidedBy, defaultProfile: settings.defaultProfile })),
      theme: initialTheme(),
      compareSelection: [],
      setView: (view) => set({ view, route: routeOf(view) }),
      toggleTheme: () => set((state) => ({ theme: state.theme === 'dark' ? 'light' : 'dark' })),
      setCompareSelection: (ids) => set({ compareSelection: ids }),
      live: { job: null, ttft: [], telemetry: [] },
      servers: {},
      serverLogs: {},
      appendServerLog: (serverId, lines) =>
        set((current) => ({
          serverLogs: { ...current.serverLogs, [serverId]: [...(current.serverLogs[serverId] ?? []), ...lines].slice(-LOG_CAPACITY) },
        })),
      startJob: (jobId) =>
        set({
          live: {
            job: startingRunTask(jobId, null),
            ttft: [],
            telemetry: [],
          },
        }),
      applyRunProgress: (progress) =>
        set((current) => {
          if (current.live.job && current.live.job.jobId !== progress.jobId) return current;
          const ttft = current.live.ttft.concat(progress.detail.ttftPoints);
          return { live: { ...current.live, job: progress, ttft: ttft.length > TTFT_CAPACITY ? ttft.slice(-TTFT_CAPACITY) : ttft } };
        }),
      applyTelemetry: (jobId, tick) =>
        set((current) => {
          if (current.live.job?.jobId !== jobId) return current;
          const telemetry =
            current.live.telemetry.length >= TELEMETRY_CAPACITY ? current.live.telemetry.slice(1) : current.live.telemetry.slice();
          telemetry.push(tick);
          return { live: { ...current.live, telemetry } };
        }),
      applyServer: (snapshot) => set((current) => ({ servers: { ...current.servers, [snapshot.id]: snapshot } })),
      tasks: {},
      applyTask: (progress) => set((current) => ({ tasks: { ...current.tasks, [progress.jobId]: progress } })),
    }),
    persistence,
  ),
);

/**
 * Which slice each pushed event updates: one handler per event, checked by the compiler, so an
 * event added to the contract cannot go unhandled. Events carry whole snapshots; a slice
 * replaces its part.
 */
export const EVENT_SLICES: { [E in EventName]: (payload: AppEvents[E]) => void } = {
  'task.progress': (progress) =>
    progress.kind === 'run' ? useAppStore.getState().applyRunProgress(progress) : useAppStore.getState().applyTask(progress),
  'telemetry.tick': ({ jobId, tick }) => useAppStore.getState().applyTelemetry(jobId, tick),
  'server.state': (snapshot) => useAppStore.getState().applyServer(snapshot),
  'server.log': ({ serverId, lines }) => useAppStore.getState().appendServerLog(serverId, lines),
};
