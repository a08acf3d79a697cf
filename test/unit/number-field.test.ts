import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { NameSelectField } from '../../src/renderer/src/components/NameSelectField';
import { NumberField } from '../../src/renderer/src/components/NumberField';
import { SloFields, sloOfText, sloText } from '../../src/renderer/src/components/SloFields';

describe('number fields in the forms', () => {
  it('lay out the label before a number input that keeps its own aria-label and limits', () => {
    const markup = renderToStaticMarkup(
      createElement(NumberField, {
        label: 'SLO TTFT (ms)',
        'aria-label': 'slo ttft',
        min: 0,
        step: 'any',
        placeholder: 'none',
        value: '250',
        onChange: () => undefined,
      }),
    );
    expect(markup).toBe(
      '<label>SLO TTFT (ms) <input type="number" aria-label="slo ttft" min="0" step="any" placeholder="none" value="250"/></label>',
    );
  });

  it('lay out a choice among named things with the select keeping its own aria-label; a choice may show other text than it sends', () => {
    const markup = renderToStaticMarkup(
      createElement(NameSelectField, {
        label: 'Workload',
        ariaLabel: 'experiment workload',
        value: 'chat-short',
        items: [{ name: 'chat-short' }, { name: '/data/workloads/mine.yaml', label: 'mine (/data/workloads/mine.yaml)' }],
        onChange: () => undefined,
      }),
    );
    expect(markup).toBe(
      '<label>Workload <select aria-label="experiment workload"><option value="chat-short" selected="">chat-short</option>' +
        '<option value="/data/workloads/mine.yaml">mine (/data/workloads/mine.yaml)</option></select></label>',
    );
  });

  it('give an SLO a field per latency the metric table lets it limit, labelled from the table, and send only the limits typed', () => {
    const markup = renderToStaticMarkup(
      createElement(SloFields, { value: sloText({ tpot_ms: 50 }), onChange: () => undefined, ariaPrefix: 'slo' }),
    );
    expect(markup).toBe(
      '<label>SLO TTFT (ms) <input type="number" aria-label="slo ttft" min="0" step="any" value=""/></label>' +
        '<label>TPOT (ms) <input type="number" aria-label="slo tpot" min="0" step="any" value="50"/></label>' +
        '<label>E2E (ms) <input type="number" aria-label="slo e2e" min="0" step="any" value=""/></label>',
    );
    expect(sloOfText({ ttft_ms: ' ', tpot_ms: '50', e2e_ms: '2000' })).toEqual({ tpot_ms: 50, e2e_ms: 2000 });
    expect(sloOfText(sloText(null))).toBeNull();
  });
});
