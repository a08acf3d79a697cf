import type { RunningLlamaServer } from '../telemetry/proc-stat';

/**
 * Two llama-servers whose threads together exceed the cores fight over them: on two
 * cores, two servers of two threads each turned a 0.12 s TTFT into 19 s, and both runs
 * still looked completed. So a start that would oversubscribe is refused unless forced.
 *
 * The rule: the threads of every other running llama-server, plus the new server's,
 * may not exceed the cores this process may run on. A server started without -t counts
 * as using every core (llama.cpp's default is about one thread per core). Servers of the
 * same ServerManager are not "other": the app runs one measurement at a time on them (an
 * experiment keeps idle servers for its conditions), and should two of them ever serve at
 * once, the run's contention record marks it contaminated.
 */
export function oversubscription(options: { threads: number; cores: number; others: readonly RunningLlamaServer[] }): string | null {
  const claimed = options.others.reduce((sum, server) => sum + server.threads, 0);
  if (options.others.length === 0 || claimed + options.threads <= options.cores) return null;
  const described = options.others.map((server) => {
    const origin = /(^|\/)inferlab(\s|$)/.test(server.parentCommand) ? 'started by another Infer Lab process' : 'already running';
    return `llama-server pid ${server.pid} (${origin}, ${server.threads} thread${server.threads === 1 ? '' : 's'}${server.threadsGiven ? '' : ' by default'})`;
  });
  const free = options.cores - claimed;
  const lower = free >= 1 ? `lower this server's threads to ${free} (--set threads=${free}), ` : '';
  return `Refusing to start llama-server with ${options.threads} thread${options.threads === 1 ? '' : 's'}: ${described.join(', ')} already claim${options.others.length === 1 ? 's' : ''} ${claimed} of this machine's ${options.cores} cores, and ${claimed + options.threads} threads on ${options.cores} cores would slow both servers and distort every measurement taken on either. Stop the other server, ${lower}or start anyway with --force (force: true); runs measured beside a busy server are then marked contaminated.`;
}

/**
 * Of the llama-servers found beside a server that has just loaded, those it must yield
 * to: the older ones (by start time, then pid). Two servers started at the same moment
 * both pass the check made before launching; this way exactly one of them is refused.
 */
export function olderThan(own: { pid: number; startTicks: number }, others: readonly RunningLlamaServer[]): RunningLlamaServer[] {
  return others.filter(
    (other) => other.pid !== own.pid && (other.startTicks < own.startTicks || (other.startTicks === own.startTicks && other.pid < own.pid)),
  );
}
