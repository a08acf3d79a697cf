import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import type { AmdGpuIdentity } from './gpu-identity';

/*
 * What ROCm's two visibility variables count, and so how a GPU chosen by amd-smi's index is
 * handed to a ROCm server.
 *
 * ROCR_VISIBLE_DEVICES is ROCr's filter. Its numbers count the KFD nodes that have compute
 * cores, node by node; it also takes UUIDs (`GPU-` and 16 hex digits, a unique prefix, any
 * case), and surfaces the GPUs in the order listed (ROCR-Runtime core/runtime/amd_filter_device.cpp
 * and amd_topology.cpp; ROCm's "GPU isolation techniques": "A list of device indices or UUIDs").
 *
 * HIP_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES where it is unset) is HIP's. Its numbers count the
 * GPUs ROCr surfaced, in ROCr's enumeration order (clr rocclr/device/rocm/rocdevice.cpp). In the
 * ROCr sources read, that order is KFD's; a public report says ROCr brings up the GPUs of one
 * architecture together, so that on a host with two architectures HIP's numbers and ROCr's
 * differ and one number in both variables can hide every GPU (mcmonkeyprojects/SwarmUI#565).
 * Where every GPU is one PCI device, and so one architecture, the two agree either way.
 *
 * So a choice goes out as HIP_VISIBLE_DEVICES, the variable vLLM and Ray expect, only where
 * HIP's order is known. Elsewhere it is pinned in ROCR_VISIBLE_DEVICES by UUID, or by ROCr's own
 * number where amd-smi shows no UUID (an APU, or a driver that gives no unique id), and HIP's
 * variables are withheld. Telemetry reads amd-smi's indexes, and the pin is taken from the same
 * amd-smi entry (its bus id, UUID and KFD node), so it samples the GPU the server runs on.
 */

/** amd-smi's list where it has a GPU; null where amd-smi was not read or lists none. */
export function listedAmd(amd: readonly AmdGpuIdentity[] | null | undefined): readonly AmdGpuIdentity[] | null {
  return amd && amd.length > 0 ? amd : null;
}

/** Whether every GPU has ROCr's number (amd-smi printed every KFD node). */
function numbered(gpus: readonly AmdGpuIdentity[]): boolean {
  return gpus.every((gpu) => gpu.rocrIndex !== null);
}

/** Whether HIP numbers these GPUs as ROCr does: there is one, or all are one PCI device. */
function hipOrderKnown(gpus: readonly AmdGpuIdentity[]): boolean {
  const deviceIds = new Set(gpus.map((gpu) => gpu.deviceId));
  return gpus.length <= 1 || (deviceIds.size === 1 && !deviceIds.has(null));
}

/**
 * The variable and value that confine a ROCm server to the GPUs chosen by amd-smi's index, one
 * entry per index in their order (the server's ROCm0 is the first); null where amd-smi's list cannot say (the
 * indexes then pass as HIP's, which most hosts number alike). An index amd-smi does not list
 * passes unchanged: the presence check refuses it before launch.
 */
export function rocmPin(
  indexes: readonly number[],
  amd: readonly AmdGpuIdentity[] | null | undefined,
): { variable: 'HIP_VISIBLE_DEVICES' | 'ROCR_VISIBLE_DEVICES'; value: string } | null {
  const gpus = listedAmd(amd);
  if (!gpus) return null;
  const chosen = indexes.map((index) => ({ index, gpu: gpus.find((candidate) => candidate.index === index) }));
  if (numbered(gpus) && hipOrderKnown(gpus))
    return { variable: 'HIP_VISIBLE_DEVICES', value: chosen.map(({ index, gpu }) => gpu?.rocrIndex ?? index).join(',') };
  const pins = chosen.map(({ index, gpu }) => (gpu ? (gpu.rocrUuid ?? gpu.rocrIndex) : index));
  return pins.every((pin) => pin !== null) ? { variable: 'ROCR_VISIBLE_DEVICES', value: pins.join(',') } : null;
}

/** The GPU a `GPU-…` entry names, as ROCr matches it: a prefix of one UUID only, any case. */
function gpuOfUuid(entry: string, gpus: readonly AmdGpuIdentity[]): AmdGpuIdentity | null {
  if (!/^GPU-[0-9a-f]+$/i.test(entry)) return null;
  const matches = gpus.filter((gpu) => gpu.rocrUuid !== null && gpu.rocrUuid.toUpperCase().startsWith(entry.toUpperCase()));
  return matches.length === 1 ? matches[0]! : null;
}

function missingDevice(variable: string, device: string, listed: readonly number[]): AppError {
  return new AppError(
    ErrorCode.InvalidInput,
    `${variable} names ROCm device ${device}, but amd-smi lists ${listed.length} GPU${listed.length === 1 ? '' : 's'} (ROCm devices ${listed.join(', ')}): the server would not find it; fix or unset ${variable}`,
  );
}

/** ROCR_VISIBLE_DEVICES's GPUs in the order ROCr surfaces them; null where an entry names no GPU amd-smi shows. */
function rocrVisible(entries: readonly string[], inRocrOrder: readonly AmdGpuIdentity[]): AmdGpuIdentity[] | null {
  const visible: AmdGpuIdentity[] = [];
  for (const entry of entries) {
    const isNumber = /^\d+$/.test(entry);
    const gpu = isNumber ? inRocrOrder.find((candidate) => candidate.rocrIndex === Number(entry)) : gpuOfUuid(entry, inRocrOrder);
    if (!gpu && isNumber)
      throw missingDevice(
        'ROCR_VISIBLE_DEVICES',
        entry,
        inRocrOrder.map((each) => each.rocrIndex!),
      );
    if (!gpu) return null;
    visible.push(gpu);
  }
  return visible;
}

/**
 * The shell's ROCR_VISIBLE_DEVICES, then HIP's variable within what it leaves, as amd-smi's
 * indexes of the GPUs they name. Null where they cannot be mapped: a UUID amd-smi shows no GPU
 * for, or HIP's numbers over GPUs whose HIP order is not known. A ROCm number the host lacks is
 * refused: the server would not find it.
 */
export function amdIndexesOfShell(
  rocr: readonly string[] | null,
  hip: { variable: string; entries: readonly string[] } | null,
  gpus: readonly AmdGpuIdentity[],
): number[] | null {
  const numbers = (entries: readonly string[] | null | undefined) => !!entries?.some((entry) => /^\d+$/.test(entry));
  // ROCr's numbers, and HIP's over every GPU, need every KFD node; without them only UUIDs can be followed.
  if (!numbered(gpus) && (numbers(rocr) || (rocr === null && numbers(hip?.entries)))) return null;
  const inRocrOrder = numbered(gpus) ? [...gpus].sort((a, b) => a.rocrIndex! - b.rocrIndex!) : gpus;
  const visible = rocr === null ? inRocrOrder : rocrVisible(rocr, inRocrOrder);
  if (visible === null) return null;
  if (hip === null) return visible.map((gpu) => gpu.index);
  const beyond = hip.entries.filter((entry) => /^\d+$/.test(entry) && Number(entry) >= visible.length);
  if (beyond.length > 0 && rocr === null)
    throw missingDevice(
      hip.variable,
      beyond[0]!,
      inRocrOrder.map((each) => each.rocrIndex!),
    );
  if (beyond.length > 0)
    throw new AppError(
      ErrorCode.InvalidInput,
      `${hip.variable}=${hip.entries.join(',')} counts only the ${visible.length} GPU${visible.length === 1 ? '' : 's'} that ROCR_VISIBLE_DEVICES=${rocr!.join(',')} leaves visible, so ${beyond.join(', ')} names none; use indexes below ${visible.length}, or unset one of the two`,
    );
  const chosen: number[] = [];
  for (const entry of hip.entries) {
    const gpu = /^\d+$/.test(entry) ? (hipOrderKnown(visible) ? visible[Number(entry)]! : null) : gpuOfUuid(entry, visible);
    if (!gpu) return null;
    chosen.push(gpu.index);
  }
  return chosen;
}
