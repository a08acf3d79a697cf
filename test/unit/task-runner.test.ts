import { describe, expect, it } from 'vitest';
import type { AppEvents, EventName, EventSink, ExperimentTaskProgress, TaskProgress, ToolTaskProgress } from '../../src/shared/contract';
import { AppError, Cancelled, throwIfCancelled } from '../../src/main/core/errors';
import { awaitTask, launchToolTask, TaskRunner } from '../../src/main/services/tasks';
import { ErrorCode } from '../../src/shared/errors';

/** The events a runner sends, kept as they left. */
function recordingSink() {
  const sent: TaskProgress[] = [];
  const sink: EventSink = {
    emit<E extends EventName>(name: E, payload: AppEvents[E]) {
      if (name === 'task.progress') sent.push(payload as TaskProgress);
    },
  };
  return { sink, sent, phases: () => sent.map((progress) => progress.phase) };
}

/** A promise with its resolve, to hold a task's work where a test wants it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Work that waits for its gate, then stops if it was cancelled by then, as the protocols do between windows. */
function experimentAt(runner: TaskRunner, step: Promise<void>) {
  return runner.launch<ExperimentTaskProgress, string>({
    kind: 'experiment',
    detail: { result: null },
    cancelledMessage: 'cancelled: stored as interrupted',
    async work(task) {
      task.running('window 1 of 2');
      await step;
      throwIfCancelled(task.signal);
      return 'measured';
    },
    settle: (progress) => {
      progress.message = 'finished';
    },
  });
}

describe('the task runner', () => {
  it('moves a task starting → running → finished, every report in the one payload shape', async () => {
    const { sink, sent, phases } = recordingSink();
    const runner = new TaskRunner(sink);
    const step = gate();
    const task = experimentAt(runner, step.opened);
    step.open();
    expect(await task.outcome).toEqual({ status: 'finished', value: 'measured' });
    expect(phases()).toEqual(['starting', 'running', 'finished']);
    for (const progress of sent)
      expect(Object.keys(progress).sort()).toEqual(['detail', 'done', 'error', 'jobId', 'kind', 'message', 'phase', 'total']);
    expect(sent.map((progress) => progress.message)).toEqual(['starting', 'window 1 of 2', 'finished']);
    expect(new Set(sent.map((progress) => progress.jobId))).toEqual(new Set([task.jobId]));
    expect(runner.size).toBe(0);
  });

  it('ends a cancelled task cancelled, with no error: an outcome of its own, not a failure', async () => {
    const { sink, sent, phases } = recordingSink();
    const runner = new TaskRunner(sink);
    const step = gate();
    const task = experimentAt(runner, step.opened);
    runner.cancel(task.jobId);
    step.open();
    expect(await task.outcome).toEqual({ status: 'cancelled', value: null });
    expect(phases()).toEqual(['starting', 'running', 'cancelled']);
    expect(sent.at(-1)).toMatchObject({ phase: 'cancelled', error: null, message: 'cancelled: stored as interrupted' });
  });

  it('keeps what cancelled work returned: a run stopped by the user still has the summary of its finished requests', async () => {
    const { sink, sent } = recordingSink();
    const runner = new TaskRunner(sink);
    const step = gate();
    const task = runner.launch<ToolTaskProgress, string>({
      kind: 'quantize',
      detail: null,
      work: async () => {
        await step.opened;
        return 'partial';
      },
    });
    runner.cancel(task.jobId);
    step.open();
    expect(await task.outcome).toEqual({ status: 'cancelled', value: 'partial' });
    expect(sent.at(-1)).toMatchObject({ phase: 'cancelled', error: null });
  });

  it('ends a failed task failed, its error in the payload and its message the error message', async () => {
    const { sink, sent } = recordingSink();
    const runner = new TaskRunner(sink);
    const error = new AppError(ErrorCode.EngineMissing, 'llama-quantize is not available; run inferlab setup');
    const task = launchToolTask(runner, 'quantize', async () => {
      throw error;
    });
    expect(await task.outcome).toEqual({ status: 'failed', error });
    expect(sent.at(-1)).toMatchObject({
      phase: 'failed',
      message: error.message,
      error: { code: ErrorCode.EngineMissing, message: error.message },
    });
  });

  it('counts an error thrown after the cancel as the cancel, not as a failure', async () => {
    const { sink, sent } = recordingSink();
    const runner = new TaskRunner(sink);
    const step = gate();
    const task = launchToolTask(runner, 'setup', async (signal) => {
      await step.opened;
      // What a killed child process looks like to its caller.
      if (signal.aborted) throw new Error('llama-quantize exited with signal SIGTERM');
    });
    runner.cancel(task.jobId);
    step.open();
    expect((await task.outcome).status).toBe('cancelled');
    expect(sent.at(-1)).toMatchObject({ phase: 'cancelled', error: null });
  });

  it('loses no cancel that arrives before the work has begun', async () => {
    const runner = new TaskRunner(recordingSink().sink);
    let sawAbort: boolean | null = null;
    const task = launchToolTask(runner, 'pull', async (signal) => {
      await Promise.resolve();
      sawAbort = signal.aborted;
      throwIfCancelled(signal);
    });
    runner.cancel(task.jobId);
    expect((await task.outcome).status).toBe('cancelled');
    expect(sawAbort).toBe(true);
  });

  it('sends a step report at once and other reports at most once per interval; each event is a snapshot', async () => {
    const { sink, sent } = recordingSink();
    const runner = new TaskRunner(sink);
    const step = gate();
    const task = runner.launch<ToolTaskProgress, void>({
      kind: 'quantize',
      detail: null,
      sendIntervalMs: 60_000,
      async work(control) {
        control.running('tensor 1');
        for (let done = 1; done <= 50; done += 1) {
          control.progress.done = done;
          control.send();
        }
        control.progress.message = 'tensor 50';
        control.send(true);
        await step.opened;
      },
    });
    await Promise.resolve();
    // starting, running, and the forced one: none of the 50 unforced sends fits inside the interval.
    expect(sent.map((progress) => [progress.phase, progress.message, progress.done])).toEqual([
      ['starting', 'starting', 0],
      ['running', 'tensor 1', 0],
      ['running', 'tensor 50', 50],
    ]);
    step.open();
    await task.outcome;
    expect(sent.at(-1)).toMatchObject({ phase: 'finished', message: 'tensor 50', done: 50 });
    expect(sent[1]).toMatchObject({ message: 'tensor 1', done: 0 });
  });

  it('says when the first task starts and the last ends, and disposing the runner waits for every task to end', async () => {
    const active: boolean[] = [];
    const runner = new TaskRunner(recordingSink().sink, (value) => active.push(value));
    const ended: string[] = [];
    const slowStop = (name: string) =>
      launchToolTask(runner, 'setup', async (signal) => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        await new Promise((resolve) => setTimeout(resolve, 20));
        ended.push(name);
        throwIfCancelled(signal);
      });
    slowStop('a');
    slowStop('b');
    expect(runner.size).toBe(2);
    expect(active).toEqual([true]);
    await runner.dispose();
    expect(ended.sort()).toEqual(['a', 'b']);
    expect(runner.size).toBe(0);
    expect(active).toEqual([true, false]);
  });

  it('gives an in-process caller the value, the failure, or Cancelled when there is nothing to give', async () => {
    const runner = new TaskRunner(recordingSink().sink);
    expect(
      await awaitTask(
        launchToolTask(runner, 'pull', async () => 7),
        runner,
      ),
    ).toBe(7);
    const failing = launchToolTask(runner, 'pull', async () => {
      throw new AppError(ErrorCode.NotFound, 'no such repository');
    });
    await expect(awaitTask(failing, runner)).rejects.toThrow('no such repository');
    // The caller's own signal cancels the task.
    const controller = new AbortController();
    const step = gate();
    const waiting = awaitTask(experimentAt(runner, step.opened), runner, controller.signal);
    controller.abort();
    step.open();
    await expect(waiting).rejects.toBeInstanceOf(Cancelled);
  });
});
