import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import type { CommandHandler } from '../args';
import { completionScript } from '../help';
import { COMPLETION_USAGE } from '../usage';

export const completionCommand: CommandHandler = async (args) => {
  const [shell] = args;
  if (shell !== 'bash' && shell !== 'zsh')
    throw new AppError(ErrorCode.Usage, `completion needs bash or zsh, got "${shell ?? ''}"\n\nUsage: ${COMPLETION_USAGE}`);
  process.stdout.write(completionScript(shell));
  return 0;
};
