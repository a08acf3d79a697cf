import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { readGgufHeaderAsync } from './gguf-reader';

/**
 * A profile's projector checked before launch: a GGUF multimodal projector (`general.architecture`
 * "clip") with a vision encoder. llama-server refuses any other file only after the model has
 * loaded, in a log line that names neither the field nor what to do.
 */
export async function assertImageProjector(file: string): Promise<void> {
  const refuse = (problem: string): never => {
    throw new AppError(ErrorCode.InvalidInput, `projector ${file}: ${problem}`);
  };
  const header = await readGgufHeaderAsync(file).catch((error: Error) => refuse(`not a readable GGUF file: ${error.message}`));
  const architecture = header.metadata.get('general.architecture');
  if (architecture !== 'clip')
    refuse(
      `general.architecture is ${JSON.stringify(architecture ?? null)}, not "clip": name the model's mmproj-*.gguf file (demo:mmproj for the demo models)`,
    );
  if (header.metadata.get('clip.has_vision_encoder') !== true)
    refuse('has no vision encoder (clip.has_vision_encoder is not true): it cannot read images');
}
