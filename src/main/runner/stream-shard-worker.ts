/**
 * A stream shard: a worker thread that sends a run's requests at their scheduled times and reads
 * their streams on its own event loop, so one loop's lateness does not become every request's
 * slip. The run thread keeps the schedule, the records and the one store writer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { summarize } from '../metrics/distribution';
import { watchClientLoad } from './client-load';
import {
  clockOrigin,
  shiftCompletionTimes,
  turnBatcher,
  type FromShard,
  type ShardInit,
  type ShardRequest,
  type ShardResult,
  type ToShard,
} from './shard-protocol';
import { createKeepAliveAgent, streamCompletion } from '../client/stream-client';
import { stepToward } from './load-generator';

const init = workerData as ShardInit;
const port = parentPort!;
const origin = clockOrigin();
const toRunClock = origin - init.runOrigin;
const agent = createKeepAliveAgent(init.sockets);
const cancel = new AbortController();
let halted = false;
let sent = 0;
const slips: number[] = [];
let watch: ReturnType<typeof watchClientLoad> | null = null;

const reply = (message: FromShard) => port.postMessage(message);
const results = turnBatcher<ShardResult>((batch) => reply({ kind: 'done', results: batch }));
const notSent = (request: ShardRequest) => results.add({ id: request.id, completion: null });

/**
 * Requests waiting for their time, earliest first. One waits at a time, as the run's own
 * generator does: a timer for the bulk, then yielding to the loop for the last millisecond.
 * Each waiting for itself would spin the loop once per waiting request.
 */
const queue: { due: number; request: ShardRequest }[] = [];
let waiting = false;

function enqueue(request: ShardRequest): void {
  const due = request.dueAt === null ? Number.NEGATIVE_INFINITY : request.dueAt - origin;
  if (due <= performance.now()) return void send(request, request.dueAt === null ? null : due);
  // Handed over in schedule order, so this is nearly always an append.
  let at = queue.length;
  while (at > 0 && queue[at - 1]!.due > due) at -= 1;
  queue.splice(at, 0, { due, request });
  if (!waiting) void sendWhenDue();
}

async function sendWhenDue(): Promise<void> {
  waiting = true;
  while (queue.length > 0 && !halted) {
    // After each step an earlier request may have been queued: the loop takes the head again.
    if (await stepToward(queue[0]!.due)) continue;
    const next = queue.shift()!;
    void send(next.request, next.due);
  }
  waiting = false;
  if (halted) for (const { request } of queue.splice(0)) notSent(request);
}

async function send(request: ShardRequest, due: number | null): Promise<void> {
  if (halted) return notSent(request);
  sent += 1;
  const completion = await streamCompletion({
    baseUrl: init.baseUrl,
    headers: init.headers,
    path: request.path,
    body: request.body,
    agent,
    firstTokenTimeoutMs: init.timeouts.firstTokenMs,
    totalTimeoutMs: init.timeouts.totalMs,
    signal: cancel.signal,
  });
  if (due !== null) slips.push(completion.t0 - due);
  results.add({ id: request.id, completion: shiftCompletionTimes(completion, toRunClock) });
}

function report(): void {
  results.flush();
  const load = (watch ?? watchClientLoad()).stop();
  const slip = summarize(slips);
  agent.destroy();
  reply({
    kind: 'report',
    load: {
      shard: init.shard,
      requests: sent,
      loop_utilization: load.loop_utilization,
      loop_delay_ms_p99: load.loop_delay_ms_p99,
      loop_delay_ms_max: load.loop_delay_ms_max,
      slip_ms_p99: slip.p99,
      slip_ms_max: slip.max,
    },
  });
}

port.on('message', (message: ToShard) => {
  switch (message.kind) {
    case 'send':
      for (const request of message.requests) enqueue(request);
      break;
    case 'window':
      watch ??= watchClientLoad();
      break;
    case 'halt':
    case 'cancel':
      halted = true;
      if (message.kind === 'cancel') cancel.abort();
      if (!waiting) for (const { request } of queue.splice(0)) notSent(request);
      break;
    case 'report':
      report();
      break;
  }
});

// The run waits for this before its load starts: a shard still loading its code would send its first requests late.
reply({ kind: 'ready' });
