import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StopSignal } from '../src/stop-signal.js';
import { BudgetClock, TimeBudget } from '../src/time-budget.js';

// Node's timers and performance.now() replaced by vitest's fake clock: the budget's arithmetic
// and the shared clock's hand-over to a timer of its own, checked to the millisecond.
describe('TimeBudget on the shared clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a long budget ends when its time is spent, not a tick later', () => {
    const budget = new TimeBudget(1_000, undefined, new BudgetClock());
    const expired = vi.fn();
    budget.run(expired);
    vi.advanceTimersByTime(999);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('charges only the time it runs, across pauses on and off the clock', () => {
    const budget = new TimeBudget(3_000, undefined, new BudgetClock());
    const expired = vi.fn();
    budget.run(expired);
    vi.advanceTimersByTime(1_200);
    budget.pause();
    vi.advanceTimersByTime(60_000);
    expect(expired).not.toHaveBeenCalled();
    // 1,800 ms left: on the clock again.
    budget.run(expired);
    vi.advanceTimersByTime(1_500);
    budget.pause();
    // 300 ms left: a timer of its own.
    vi.advanceTimersByTime(60_000);
    budget.run(expired);
    vi.advanceTimersByTime(299);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('a budget paused on the clock is forgotten by it; another ends on time beside it', () => {
    const clock = new BudgetClock();
    const a = new TimeBudget(2_000, undefined, clock);
    const b = new TimeBudget(5_000, undefined, clock);
    const aExpired = vi.fn();
    const bExpired = vi.fn();
    a.run(aExpired);
    b.run(bExpired);
    vi.advanceTimersByTime(1_000);
    a.pause();
    vi.advanceTimersByTime(3_999);
    expect(aExpired).not.toHaveBeenCalled();
    expect(bExpired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(bExpired).toHaveBeenCalledTimes(1);
    expect(aExpired).not.toHaveBeenCalled();
  });

  it('a spent budget run again ends at once', () => {
    const budget = new TimeBudget(800, undefined, new BudgetClock());
    const first = vi.fn();
    budget.run(first);
    vi.advanceTimersByTime(800);
    expect(first).toHaveBeenCalledTimes(1);
    const again = vi.fn();
    budget.run(again);
    vi.advanceTimersByTime(0);
    expect(again).toHaveBeenCalledTimes(1);
  });
});

describe('StopSignal', () => {
  it('calls each listener once at the first abort, none removed or added after it', () => {
    const s = new StopSignal();
    const kept = vi.fn();
    const removed = vi.fn();
    const third = vi.fn();
    s.on('abort', kept);
    s.once('abort', removed);
    s.addListener('abort', third);
    s.removeListener('abort', removed);
    expect(s.listenerCount('abort')).toBe(2);
    s.abort('why');
    s.abort('again');
    const late = vi.fn();
    s.on('abort', late);
    expect(kept).toHaveBeenCalledTimes(1);
    expect(third).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    expect(late).not.toHaveBeenCalled();
    expect(s).toMatchObject({ aborted: true, reason: 'why' });
    expect(s.listenerCount('abort')).toBe(0);
  });
});
