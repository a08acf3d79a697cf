import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ExperimentResult, VerdictRow } from '../../src/shared/contract/experiments';
import { VerdictsTable } from '../../src/renderer/src/views/ExperimentResultView';

const row: VerdictRow = {
  metric: 'tpot_ms p50',
  a: 'base',
  b: 'demo-lora@0.5',
  a_value: 2.2,
  b_value: 2.5,
  difference: 0.3,
  ci: [0.2, 0.4],
  verdict: 'slower',
  relative_difference: 0.136,
  relative_ci: [0.09, 0.18],
  confidence: 0.95,
};
const render = (kind: ExperimentResult['kind'], verdicts: VerdictRow[]) =>
  renderToStaticMarkup(createElement(VerdictsTable, { result: { kind, verdicts } as unknown as ExperimentResult, firstNote: 1 }));

describe("an experiment's verdicts in the app", () => {
  it('says there are none rather than show an empty table under the heading', () => {
    const empty = render('adapter', []);
    expect(empty).toContain('Verdicts');
    expect(empty).toContain('None in this result: no two conditions measured windows to compare.');
    const shown = render('adapter', [row]);
    expect(shown).not.toContain('None in this result');
    expect(shown).toContain('base → demo-lora@0.5');
    expect(shown).toContain('slower');
  });

  it('says nothing of verdicts for a kind that gives none (a capacity search)', () => {
    expect(render('capacity', [])).not.toMatch(/Verdicts|None in this result/);
  });
});
