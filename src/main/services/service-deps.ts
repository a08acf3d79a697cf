import type { EventSink } from '../../shared/contract';
import type { EngineInfo } from '../../shared/contract/engine';
import type { ServerManager } from '../server/server-manager';
import type { AppStore } from '../store/app-store';
import type { ServiceAccess } from './access';
import type { TaskRunner } from './tasks';

/** What the services that run work (runs, experiments) are built from by the composition root. */
export interface WorkServiceDeps {
  store: AppStore;
  access: ServiceAccess;
  /** Built on first use: reading runs and experiments never loads the server manager. */
  servers: () => Promise<ServerManager>;
  engine: () => Promise<EngineInfo>;
  events: EventSink;
  /** The one task runner of the composition root: every service's long operations run on it. */
  tasks: TaskRunner;
}
