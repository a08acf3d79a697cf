import type { RequestErrorClass } from '../../shared/contract/measurement';

/**
 * Notices a server that stopped answering (hung, stopped, overloaded past every timeout) from the
 * requests' outcomes, so the run ends instead of timing out request by request until its count
 * is reached: as many timeouts in a row as there are slots (at least 3), or twice as many
 * refused connections (at least 10).
 */
export class ResponsivenessWatch {
  private consecutiveTimeouts = 0;
  private consecutiveRefusals = 0;
  private readonly timeoutsToGiveUp: number;
  private readonly refusalsToGiveUp: number;

  constructor(slots: number) {
    this.timeoutsToGiveUp = Math.max(3, slots);
    this.refusalsToGiveUp = Math.max(10, 2 * slots);
  }

  /** Records one finished request; the reason to give up when this one made the server look gone, else null. */
  record(errorClass: RequestErrorClass | null): string | null {
    const timedOut = errorClass === 'first_token_timeout' || errorClass === 'total_timeout';
    this.consecutiveTimeouts = timedOut ? this.consecutiveTimeouts + 1 : 0;
    this.consecutiveRefusals = errorClass === 'connect' ? this.consecutiveRefusals + 1 : 0;
    if (this.consecutiveTimeouts < this.timeoutsToGiveUp && this.consecutiveRefusals < this.refusalsToGiveUp) return null;
    const count = Math.max(this.consecutiveTimeouts, this.consecutiveRefusals);
    return `the server stopped responding: ${count} requests in a row failed (${errorClass})`;
  }
}
