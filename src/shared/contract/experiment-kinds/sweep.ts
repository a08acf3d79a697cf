import { Type, type Static } from '@sinclair/typebox';
import { Maybe, Name, Names, Strict, type SloSpec } from '../schema-parts';
import { experimentSpec, FIXED_DESIGN_FIELD, type ProtocolBase } from './common';

/**
 * The workload fields a sweep can vary instead of a profile field, each with what it sets: every
 * value then runs on the same server setting, and what changes is what each request carries.
 */
export const SWEEP_WORKLOAD_FIELDS = {
  inputs_per_request: { label: 'Texts per embeddings request', workload: 'embeddings' },
} as const;
export type SweepWorkloadField = keyof typeof SWEEP_WORKLOAD_FIELDS;

export const isSweepWorkloadField = (field: string | undefined): field is SweepWorkloadField =>
  Object.hasOwn(SWEEP_WORKLOAD_FIELDS, field ?? '');

export const SweepSpecSchema = experimentSpec(
  'sweep',
  {
    vary: Maybe(Type.Object({ field: Name, values: Names }, Strict), 'The profile field to vary and its values.'),
    loadConcurrencies: Maybe(Type.Array(Type.Number(), { maxItems: 64 }), 'The load levels (concurrency) every setting runs at.'),
    fixed: FIXED_DESIGN_FIELD,
  },
  'One server setting at several values, each at one or more load levels; its SLO is constraints.slo.',
);
export type SweepSpec = Static<typeof SweepSpecSchema>;

/** What a sweep records of how it ran. */
export interface SweepProtocol extends ProtocolBase<'sweep'> {
  model: string;
  vary: { field: string; values: string[] };
  /** The load levels every setting ran at. */
  concurrency: number[];
  repeats: number;
  requests_per_condition: number | null;
  slo: SloSpec | null;
  slo_attainment: number | null;
  windows: string;
}
