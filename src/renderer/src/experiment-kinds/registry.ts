import type { ComponentType } from 'react';
import { DEFAULT_EXPERIMENT_WORKLOAD } from '../../../shared/contract/experiment-kinds/registry';
import type { ExperimentKind, ExperimentResult } from '../../../shared/contract/experiments';
import { ADAPTER_FORM, AdapterResult } from './adapter';
import { CAPACITY_FORM } from './capacity-form';
import type { ExperimentKindForm } from './form-state';
import { KVCACHE_FORM, KvCacheResult } from './kvcache';
import { QUANT_FORM } from './quant-form';
import { QUANT_COLUMNS, QuantResult } from './quant-result';
import type { KindColumns } from './result-parts';
import { SPECULATIVE_COLUMNS, SpeculativeResult } from './speculative-result';
import { SWEEP_COLUMNS } from './sweep-result';
import { CapacityResult } from './capacity-result';
import { SPECULATIVE_FORM } from './speculative-form';
import { SWEEP_FORM } from './sweep-form';
import { WARMCOLD_FORM } from './warmcold-form';

/** How the Experiments view shows each kind: its name and fields in the form, its default workload, and a result panel of its own where it has one. */
export interface ExperimentKindView {
  label: string;
  title: string;
  defaultWorkload: string;
  form: ExperimentKindForm;
  Result?: ComponentType<{ result: ExperimentResult }>;
  /** Columns it adds to the shared condition table. */
  columns?: KindColumns;
  /** It gives no verdicts between conditions (a capacity search measures loads). */
  verdicts?: false;
}

export const EXPERIMENT_KIND_VIEWS: Record<ExperimentKind, ExperimentKindView> = {
  quant: {
    label: 'Quantizations',
    title: 'Quantization',
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.quant,
    form: QUANT_FORM,
    Result: QuantResult,
    columns: QUANT_COLUMNS,
  },
  warmcold: {
    label: 'Warm against cold',
    title: 'Warm against cold',
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.warmcold,
    form: WARMCOLD_FORM,
  },
  sweep: {
    label: 'Sweep a server setting',
    title: 'Sweep',
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.sweep,
    form: SWEEP_FORM,
    columns: SWEEP_COLUMNS,
  },
  capacity: {
    label: 'Capacity under an SLO',
    title: 'Capacity',
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.capacity,
    form: CAPACITY_FORM,
    Result: CapacityResult,
    verdicts: false,
  },
  speculative: {
    label: 'Speculative decoding',
    title: 'Speculative decoding',
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.speculative,
    form: SPECULATIVE_FORM,
    Result: SpeculativeResult,
    columns: SPECULATIVE_COLUMNS,
  },
  kvcache: {
    label: 'KV cache types',
    title: 'KV cache types',
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.kvcache,
    form: KVCACHE_FORM,
    Result: KvCacheResult,
  },
  adapter: {
    label: 'LoRA adapters',
    title: 'LoRA adapters',
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.adapter,
    form: ADAPTER_FORM,
    Result: AdapterResult,
  },
};

export const EXPERIMENT_KIND_ORDER = Object.keys(EXPERIMENT_KIND_VIEWS) as ExperimentKind[];
