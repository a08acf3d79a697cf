import path from 'node:path';
import type { EventSink, ModelsService } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { AppError, toErrorShape } from '../core/errors';
import type { EngineInfo } from '../../shared/contract/engine';
import { toolPath } from '../engines/llamacpp/locate-engine';
import { defaultModelFolders, describeModel, scanModels } from '../models/model-library';
import { quantizeModel } from '../models/quantize';
import { resolveModelWithin, type ServiceAccess } from './access';
import { newJobId } from './jobs';

const QUANT_TYPE = /^[A-Z0-9_]+$/i;

export function createModelsService(
  engine: () => Promise<EngineInfo>,
  events: EventSink,
  access: ServiceAccess,
): ModelsService & { dispose(): void } {
  const running = new Map<string, AbortController>();
  return {
    async scan(folders?: string[] | null) {
      const chosen =
        folders && folders.length > 0
          ? folders.map((folder) => access.paths.check(folder, 'model'))
          : access.paths.unrestricted
            ? defaultModelFolders()
            : access.paths.roots('model');
      return scanModels(chosen, { reportMissing: Boolean(folders && folders.length > 0) });
    },
    async quantize(source, types) {
      if (types.length === 0 || types.some((type) => !QUANT_TYPE.test(type)))
        throw new AppError(ErrorCode.InvalidInput, `quantization types must look like Q8_0 or Q4_K_M, got ${JSON.stringify(types)}`);
      const file = await resolveModelWithin(access, source);
      const model = describeModel(file);
      if (!model.valid) throw new AppError(ErrorCode.InvalidInput, `${file}: ${model.invalidReason}`);
      const binary = toolPath(await engine(), 'llama-quantize');
      if (!binary) throw new AppError(ErrorCode.EngineMissing, 'llama-quantize is not available; run inferlab setup');
      const jobId = newJobId();
      const controller = new AbortController();
      running.set(jobId, controller);
      const stem = path.basename(file, '.gguf').replace(/[-.](f16|f32|bf16)$/i, '');
      void (async () => {
        try {
          for (const type of types) {
            const target = path.join(path.dirname(file), `${stem}-${type.toLowerCase()}.gguf`);
            await quantizeModel({
              quantizeBinary: binary,
              source: file,
              target,
              type,
              signal: controller.signal,
              onProgress: (done, total) =>
                events.emit('job.progress', {
                  jobId,
                  kind: 'quantize',
                  label: `${path.basename(target)}`,
                  done,
                  total,
                  finished: false,
                  error: null,
                }),
            });
          }
          events.emit('job.progress', { jobId, kind: 'quantize', label: 'done', done: 1, total: 1, finished: true, error: null });
        } catch (error) {
          const cancelled = controller.signal.aborted;
          events.emit('job.progress', {
            jobId,
            kind: 'quantize',
            label: cancelled ? 'cancelled' : 'failed',
            done: 0,
            total: null,
            finished: true,
            error: cancelled ? null : toErrorShape(error),
          });
        } finally {
          running.delete(jobId);
        }
      })();
      return { jobId };
    },
    async cancel(jobId) {
      running.get(jobId)?.abort();
    },
    dispose() {
      for (const controller of running.values()) controller.abort();
    },
  };
}
