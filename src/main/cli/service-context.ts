import { createServices, type ServiceContainer } from '../services';
import type { ServiceAccess } from '../services/access';
import { reportRecovered } from './report-recovered';

/**
 * The services as the CLI uses them: the same composition root as `serve` and the desktop
 * app, with the rights of the person at the shell and no idle GPU sampling.
 */
export async function openCliServices(
  dbOption: string | undefined,
  access: ServiceAccess,
  llamaServerPath?: string,
): Promise<ServiceContainer> {
  const container = await createServices({ dbPath: dbOption, access, idleTelemetry: false, llamaServerPath });
  reportRecovered(container.recovered);
  return container;
}
