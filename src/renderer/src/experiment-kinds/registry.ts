import type { ComponentType } from 'react';
import type { ExperimentKind, ExperimentResult } from '../../../shared/contract/experiments';
import { DEFAULT_EXPERIMENT_WORKLOAD } from '../../../shared/experiment-defaults';
import { KvCacheResult } from './kvcache';

/** How the Experiments view shows each kind: its name in the form, its default workload, and a result panel of its own where it has one. */
export interface ExperimentKindView {
  label: string;
  title: string;
  defaultWorkload: string;
  Result?: ComponentType<{ result: ExperimentResult }>;
}

export const EXPERIMENT_KIND_VIEWS: Record<ExperimentKind, ExperimentKindView> = {
  quant: { label: 'Quantizations', title: 'Quantization', defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.quant },
  warmcold: { label: 'Warm against cold', title: 'Warm against cold', defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.warmcold },
  sweep: { label: 'Sweep a server setting', title: 'Sweep', defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.sweep },
  capacity: { label: 'Capacity under an SLO', title: 'Capacity', defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.capacity },
  spec: { label: 'Speculative decoding', title: 'Speculative decoding', defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.spec },
  kvcache: {
    label: 'KV cache types',
    title: 'KV cache types',
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.kvcache,
    Result: KvCacheResult,
  },
};

export const EXPERIMENT_KIND_ORDER = Object.keys(EXPERIMENT_KIND_VIEWS) as ExperimentKind[];
