import { preloadable } from './components/preloadable';
import type { View } from './state/store';

/** Each view's code, loaded when the view opens, or before with `preload()`. */
export const VIEWS = {
  home: preloadable(() => import('./views/HomeView').then((module) => module.HomeView)),
  models: preloadable(() => import('./views/ModelsView').then((module) => module.ModelsView)),
  server: preloadable(() => import('./views/ServerView').then((module) => module.ServerView)),
  workloads: preloadable(() => import('./views/WorkloadsView').then((module) => module.WorkloadsView)),
  run: preloadable(() => import('./views/RunView').then((module) => module.RunView)),
  runs: preloadable(() => import('./views/RunsView').then((module) => module.RunsView)),
  compare: preloadable(() => import('./views/CompareView').then((module) => module.CompareView)),
  experiments: preloadable(() => import('./views/ExperimentsView').then((module) => module.ExperimentsView)),
  settings: preloadable(() => import('./views/SettingsView').then((module) => module.SettingsView)),
  history: preloadable(() => import('./views/HistoryView').then((module) => module.HistoryView)),
  race: preloadable(() => import('./views/RaceView').then((module) => module.RaceView)),
} satisfies Record<View, unknown>;
