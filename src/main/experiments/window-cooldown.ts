import { coolDownBetweenWindows, idleStateOf, readGpusOnce, type CooldownResult, type IdleState } from '../telemetry/cooldown';
import { nvidiaSmiPath } from '../telemetry/gpu-sampler';

/**
 * An experiment's cooldown: the GPUs' idle state read once before anything is loaded, then
 * before every window but the first a wait until they are back at it (or the timeout).
 */
export class WindowCooldown {
  readonly waits: CooldownResult[] = [];
  private windowsStarted = 0;

  private constructor(
    private readonly timeoutMs: number,
    private readonly baseline: IdleState[] | null,
    private readonly binary: string | null,
  ) {}

  static async begin(timeoutS: number, binary: string | null = nvidiaSmiPath()): Promise<WindowCooldown> {
    const idle = binary ? await readGpusOnce(binary) : null;
    return new WindowCooldown(timeoutS * 1000, idle ? idleStateOf(idle) : null, binary);
  }

  /** What the experiment's protocol records of it. */
  describe(): { timeout_s: number; idle_baseline: IdleState[] | null } {
    return { timeout_s: this.timeoutMs / 1000, idle_baseline: this.baseline };
  }

  async beforeWindow(onStatus?: (line: string) => void): Promise<void> {
    this.windowsStarted += 1;
    if (this.windowsStarted === 1) return;
    const result = await coolDownBetweenWindows(this.baseline, this.timeoutMs, this.binary);
    this.waits.push(result);
    if (result.reached === true) onStatus?.(`cooldown: back at the idle baseline after ${(result.waited_ms / 1000).toFixed(1)} s`);
    else onStatus?.(`cooldown: ${result.reason}`);
  }
}
