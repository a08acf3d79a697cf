import type { DoctorCheck } from '../../../shared/contract/doctor';
import type { EngineBuildFacts, EngineInfo } from '../../../shared/contract/engine';
import type { EnginePlan, MachineFacts } from './engine-plan';
import type { FailedGpuBuild } from './gpu-build-fallback';

/** One line on how a managed engine was built, for doctor, setup and the run record. */
export function describeEngineBuild(build: EngineBuildFacts): string {
  const how =
    build.route === 'prebuilt'
      ? `compiled on prebuilt libraries ${build.packages.map((item) => `${item.name}@${item.version}`).join(' + ')}`
      : 'built from source';
  const loaded = [build.cpuVariant ? `CPU variant ${build.cpuVariant}` : null, build.gpuLibrary].filter(Boolean).join(', ');
  const fallback = build.fallbackReason ? `; fell back from the prebuilt engine: ${build.fallbackReason.split('\n')[0]}` : '';
  return `${how}${loaded ? `, loads ${loaded}` : ''}${fallback}`;
}

/**
 * The check that keeps a GPU machine from silently measuring on its CPU: a warning when an
 * NVIDIA GPU or a Vulkan GPU is present but the engine is a CPU build. Null where there
 * is no GPU, or the engine's backend is unknown (a configured or PATH binary).
 */
export function gpuEngineCheck(
  facts: MachineFacts,
  engine: EngineInfo | null,
  plan: EnginePlan,
  /** Setup's record of this plan failing to build here, if it did. */
  failedBuild: FailedGpuBuild | null = null,
): DoctorCheck | null {
  const gpus = facts.nvidia?.gpus ?? facts.vulkanDevices?.filter((device) => /GPU/.test(device.type)).map((device) => device.name) ?? [];
  if (gpus.length === 0 || !engine?.backend) return null;
  if (engine.backend !== 'cpu')
    return { id: 'gpu-engine', label: 'GPU engine', status: 'ok', detail: `${engine.backend} engine for ${gpus.join(', ')}`, fix: null };
  const why =
    engine.build?.fallbackReason ??
    (failedBuild
      ? `setup tried to build for ${plan.backend} (${plan.reason}) on ${failedBuild.at} and the build failed (${failedBuild.reason}), so it installed the CPU engine`
      : null) ??
    (plan.backend === 'cpu'
      ? plan.reason
      : `setup would now build for ${plan.backend} (${plan.reason}), but the engine found is a CPU build`);
  return {
    id: 'gpu-engine',
    label: 'GPU engine',
    status: 'warning',
    detail: `This machine has a GPU (${gpus.join(', ')}) but the engine runs on the CPU, so every measurement is a CPU measurement: ${why}`,
    fix:
      plan.backend === 'cpu'
        ? 'install the CUDA runtime libraries (see the detail), then ./bin/inferlab setup --force'
        : failedBuild
          ? `fix what the ${plan.backend} build needs (see the detail; the CUDA runtime libraries let setup skip the source build), then ./bin/inferlab setup --backend ${plan.backend}`
          : './bin/inferlab setup --force',
  };
}
