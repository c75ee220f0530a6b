/** Time as the domain sees it. Nothing in core reads the wall clock directly: a Clock is passed in. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests move by hand (day rollovers, expiry). */
export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date | string | number = Date.UTC(2026, 0, 1)) {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  set(to: Date | string | number): void {
    this.ms = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
