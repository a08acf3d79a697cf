import type { WorkloadInfo } from '../../../shared/contract';

/** What a form sends for a workload: a built-in's name, or a saved file's path (a bare name names a built-in). */
export const workloadRef = (workload: WorkloadInfo): string => (workload.builtin ? workload.name : workload.file);

/** The workloads as a select offers them: a saved one by its name and its file. */
export const workloadOptions = (workloads: readonly WorkloadInfo[]) =>
  workloads.map((workload) => ({
    name: workloadRef(workload),
    label: workload.builtin ? workload.name : `${workload.name} (${workload.file})`,
  }));
