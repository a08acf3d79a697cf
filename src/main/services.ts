import type { AppServices } from '../shared/contract';
import { DisposableStack } from './core/disposable';
import { runDoctor } from './doctor';

export interface ServiceOptions {
  dbPath?: string;
}

export interface ServiceContainer {
  services: AppServices;
  dispose(): Promise<void>;
}

/**
 * Composition root: builds every service once and disposes them in reverse order. The
 * Electron entry, the headless server and tests all start here; nothing is a singleton.
 */
export function createServices(options: ServiceOptions = {}): ServiceContainer {
  const disposables = new DisposableStack();
  const services: AppServices = {
    doctor: {
      report: () => runDoctor({ dbPath: options.dbPath }),
    },
  };
  return { services, dispose: () => disposables.dispose() };
}
