import { describe, expect, it } from 'vitest';
import { runWindowRounds, verdictSettingsOf } from '../../src/main/experiments/window-rounds';
import { stoppingLine } from '../../src/shared/experiment-design';

/** Runs the rounds with a record of each window run and each look asked, `openAt` saying what is open at a look. */
async function rounds(design: { repeats: number; fixed: boolean }, openAt: (windows: number) => string[]) {
  const ran: string[] = [];
  const looked: number[] = [];
  const said: string[] = [];
  let windowsSoFar = 0;
  const stopping = await runWindowRounds(
    ['a', 'b', 'c'],
    design,
    async (window, condition) => {
      ran.push(`${window}${condition}`);
      windowsSoFar = window + 1;
    },
    (settings) => {
      looked.push(windowsSoFar);
      expect(settings.sequential?.looks).toEqual([3, 6]);
      return openAt(windowsSoFar);
    },
    (line) => said.push(line),
  );
  return { stopping, ran, looked, said };
}

describe('window rounds', () => {
  it('stops after the halfway round once nothing the answer needs is open, every condition run in each round', async () => {
    const { stopping, ran, looked, said } = await rounds({ repeats: 6, fixed: false }, () => []);
    expect(looked).toEqual([3]);
    expect(said).toEqual(['look after 3 of 6 windows: every verdict the answer needs is decided; stopping here']);
    expect(ran).toEqual(['0a', '0b', '0c', '1b', '1c', '1a', '2c', '2a', '2b']);
    expect(stopping).toMatchObject({ design: 'sequential', looks: [3, 6], windows_run: 3, windows_max: 6, open: [] });
    expect(stopping.reason).toBe('every verdict the answer needs was decided after 3 of 6 windows');
    // The one line the CLI table, the view and the report print.
    expect(stoppingLine(stopping)).toBe(
      'windows: 3 of 6 per condition (sequential design, looks at 3 and 6 windows): every verdict the answer needs was decided after 3 of 6 windows',
    );
  });

  it('runs to the last window while a verdict is open, and names what was still open', async () => {
    const { stopping, looked, ran, said } = await rounds({ repeats: 6, fixed: false }, () => ['q4 ttft_ms p50']);
    expect(looked).toEqual([3, 6]);
    // The halfway look says what keeps it going; the last look's finding is the result's own line.
    expect(said).toEqual(['look after 3 of 6 windows: 1 verdict(s) the answer needs still open (q4 ttft_ms p50); going on to 6']);
    const many = await rounds({ repeats: 6, fixed: false }, () => ['a 1', 'b 2', 'c 3', 'd 4', 'e 5']);
    expect(many.said).toEqual([
      'look after 3 of 6 windows: 5 verdict(s) the answer needs still open (a 1, b 2, c 3, d 4, …); going on to 6',
    ]);
    expect(ran).toHaveLength(18);
    expect(stopping).toMatchObject({ windows_run: 6, open: ['q4 ttft_ms p50'] });
    expect(stopping.reason).toMatch(/^all 6 windows: 1 verdict\(s\) the answer needs were still open \(q4 ttft_ms p50\)/);
  });

  it('the fixed design runs every window and looks at none; too few windows for a halfway look run as fixed', async () => {
    const fixed = await rounds({ repeats: 6, fixed: true }, () => []);
    expect(fixed.looked).toEqual([]);
    expect(fixed.said).toEqual([]);
    expect(fixed.stopping).toMatchObject({ design: 'fixed', looks: [6], windows_run: 6, reason: 'the fixed design: all 6 windows' });
    expect(verdictSettingsOf(fixed.stopping).sequential).toBeUndefined();
    const few = await rounds({ repeats: 2, fixed: false }, () => []);
    expect(few.stopping).toMatchObject({ design: 'fixed', windows_run: 2 });
    expect(few.stopping.reason).toMatch(/too few to look halfway/);
  });
});
