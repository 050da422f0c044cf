import { describe, expect, it } from 'vitest';
import { FairScheduler, type FlowHandle } from './fair-scheduler.ts';

/** A Loop's queue reduced to what the scheduler sees: keys waiting, calls running, its own concurrency. */
class FakeQueue {
  waiting = 0;
  running = 0;
  started = 0;
  readonly handle: FlowHandle;
  constructor(
    scheduler: FairScheduler,
    readonly tenant: string,
    readonly id: string,
    readonly log: string[],
    readonly concurrency = Infinity,
  ) {
    this.handle = scheduler.register({
      tenant,
      id,
      start: () => {
        if (this.waiting === 0 || this.running >= this.concurrency) return false;
        this.waiting -= 1;
        this.running += 1;
        this.started += 1;
        log.push(id);
        return true;
      },
      wantsMore: () => this.waiting > 0 && this.running < this.concurrency,
    });
  }
  add(n: number): void {
    this.waiting += n;
    if (this.running < this.concurrency) this.handle.ready();
  }
  /** One of its calls ends. */
  finish(): void {
    this.running -= 1;
    this.handle.done();
    if (this.waiting > 0 && this.running < this.concurrency) this.handle.ready();
  }
}

function scheduler(capacity: number, weights: Record<string, number> = {}, reserveFraction = 0) {
  let clock = 0;
  const s = new FairScheduler({ capacity, weightOf: (t) => weights[t] ?? 1, reserveFraction, now: () => clock });
  return { s, tick: (ms: number) => (clock += ms) };
}

/** Runs calls to completion one at a time, oldest first, for `steps` completions. */
function drain(queues: FakeQueue[], steps: number): void {
  for (let i = 0; i < steps; i += 1) {
    const busy = queues.filter((q) => q.running > 0);
    if (busy.length === 0) return;
    busy[i % busy.length]!.finish();
  }
}

describe('FairScheduler', () => {
  it('never has more calls in flight than its capacity across every Loop', () => {
    const { s } = scheduler(3);
    const log: string[] = [];
    const a = new FakeQueue(s, 'team-a', 'team-a/x', log);
    const b = new FakeQueue(s, 'team-b', 'team-b/y', log);
    a.add(10);
    b.add(10);
    expect(s.inFlight).toBe(3);
    expect(a.running + b.running).toBe(3);
    a.finish();
    expect(s.inFlight).toBe(3);
  });

  it('is work-conserving: a lone tenant gets every slot, and takes the idle share back when the other drains', () => {
    const { s } = scheduler(8);
    const log: string[] = [];
    const a = new FakeQueue(s, 'team-a', 'team-a/x', log);
    const b = new FakeQueue(s, 'team-b', 'team-b/y', log);
    a.add(100);
    expect(a.running).toBe(8);
    b.add(2);
    // b gets slots as a's calls end, but only what it asks for; a keeps the rest.
    a.finish();
    a.finish();
    expect(b.running).toBe(2);
    expect(a.running).toBe(6);
    b.finish();
    b.finish();
    expect(a.running).toBe(8);
  });

  it('splits the slots by weight while both tenants are busy', () => {
    const { s } = scheduler(12, { heavy: 3, light: 1 });
    const log: string[] = [];
    const heavy = new FakeQueue(s, 'heavy', 'heavy/l', log);
    const light = new FakeQueue(s, 'light', 'light/l', log);
    heavy.add(1000);
    light.add(1000);
    drain([heavy, light], 600);
    expect(heavy.running).toBe(9);
    expect(light.running).toBe(3);
  });

  it('with one slot, serves busy tenants in proportion to their weights', () => {
    const { s } = scheduler(1, { a: 2, b: 1 });
    const log: string[] = [];
    const a = new FakeQueue(s, 'a', 'a/l', log);
    const b = new FakeQueue(s, 'b', 'b/l', log);
    a.add(1000);
    b.add(1000);
    drain([a, b], 300);
    const counts = { a: log.filter((id) => id === 'a/l').length, b: log.filter((id) => id === 'b/l').length };
    expect(counts.a / counts.b).toBeCloseTo(2, 1);
  });

  it('gives the next free slot to a tenant that had none, ahead of a neighbour with a backlog of thousands', () => {
    const { s } = scheduler(4);
    const log: string[] = [];
    const noisy = new FakeQueue(s, 'noisy', 'noisy/l', log);
    noisy.add(5000);
    const quiet = new FakeQueue(s, 'quiet', 'quiet/l', log);
    quiet.add(1);
    expect(quiet.running).toBe(0);
    noisy.finish();
    expect(quiet.running).toBe(1);
  });

  it('keeps a reserved slot for a tenant with nothing in flight, so calls that hang next door never starve it', () => {
    const s = new FairScheduler({ capacity: 10, weightOf: () => 1 });
    const log: string[] = [];
    const noisy = new FakeQueue(s, 'noisy', 'noisy/l', log);
    const quiet = new FakeQueue(s, 'quiet', 'quiet/l', log);
    noisy.add(5000);
    // 10 % of 10: one slot stays free while the quiet tenant has nothing in flight; noisy's calls never end.
    expect(noisy.running).toBe(9);
    quiet.add(3);
    expect(quiet.running).toBe(1);
    quiet.finish();
    quiet.finish();
    expect(quiet.started).toBe(3);
  });

  it("shares a tenant's slots round robin over its Loops", () => {
    const { s } = scheduler(1);
    const log: string[] = [];
    const loops = ['t/a', 't/b', 't/c'].map((id) => new FakeQueue(s, 't', id, log));
    for (const q of loops) q.add(10);
    drain(loops, 9);
    // t/a started alone before the others asked and queued again ahead of them; from then on each Loop takes its turn.
    expect(log.slice(1, 10)).toEqual(['t/a', 't/b', 't/c', 't/a', 't/b', 't/c', 't/a', 't/b', 't/c']);
  });

  it("a tenant's many Loops count as one tenant: one Loop of another tenant still gets half the slots", () => {
    const { s } = scheduler(10);
    const log: string[] = [];
    const many = Array.from({ length: 20 }, (_, i) => new FakeQueue(s, 'many', `many/${i}`, log, 8));
    const one = new FakeQueue(s, 'one', 'one/l', log, 8);
    for (const q of many) q.add(100);
    one.add(100);
    drain([...many, one], 500);
    expect(one.running).toBe(5);
  });

  it("respects each Loop's own concurrency and takes no slot for a queue with nothing startable", () => {
    const { s } = scheduler(10);
    const log: string[] = [];
    const narrow = new FakeQueue(s, 'a', 'a/narrow', log, 2);
    narrow.add(50);
    expect(narrow.running).toBe(2);
    expect(s.inFlight).toBe(2);
    const other = new FakeQueue(s, 'b', 'b/l', log);
    other.add(20);
    expect(other.running).toBe(8);
  });

  it('is starvation-free: every waiting Loop of every tenant starts within a bounded number of grants', () => {
    const { s } = scheduler(3, { a: 100, b: 1, c: 0.5 });
    const log: string[] = [];
    const queues = [new FakeQueue(s, 'a', 'a/1', log), new FakeQueue(s, 'a', 'a/2', log), new FakeQueue(s, 'b', 'b/1', log), new FakeQueue(s, 'c', 'c/1', log)];
    for (const q of queues) q.add(10_000);
    drain(queues, 2000);
    for (const q of queues) expect(q.started).toBeGreaterThan(0);
    // The lightest tenant's share follows its weight: 0.5 / 101.5 of 2000 grants is about 10.
    expect(queues[3]!.started).toBeGreaterThanOrEqual(5);
  });

  it('counts the time a tenant waited for a slot with work ready, and only that', () => {
    const { s, tick } = scheduler(1);
    const log: string[] = [];
    const a = new FakeQueue(s, 'a', 'a/l', log);
    const b = new FakeQueue(s, 'b', 'b/l', log);
    a.add(1);
    tick(1000);
    b.add(1);
    tick(250);
    a.finish();
    tick(5000);
    const byTenant = Object.fromEntries(s.shares().map((share) => [share.tenant, share]));
    expect(byTenant.a?.throttledMs).toBe(0);
    expect(byTenant.b?.throttledMs).toBe(250);
    expect(byTenant.b?.inFlight).toBe(1);
    // Each Loop's own counter, for its Throttled condition.
    expect([a.handle.throttledMs(), b.handle.throttledMs()]).toEqual([0, 250]);
  });

  it("counts a Loop's wait while it is still waiting", () => {
    const { s, tick } = scheduler(1);
    const log: string[] = [];
    const a = new FakeQueue(s, 'a', 'a/l', log);
    const b = new FakeQueue(s, 'b', 'b/l', log);
    a.add(1);
    b.add(1);
    tick(400);
    expect([a.handle.throttledMs(), b.handle.throttledMs()]).toEqual([0, 400]);
    a.finish();
    tick(100);
    expect(b.handle.throttledMs()).toBe(400);
  });

  it('forgets a Loop that stopped: its waiting work gets no slot, its calls in flight still free theirs', () => {
    const { s } = scheduler(2);
    const log: string[] = [];
    const a = new FakeQueue(s, 'a', 'a/l', log);
    a.add(10);
    const b = new FakeQueue(s, 'b', 'b/l', log);
    b.add(10);
    a.handle.unregister();
    a.running -= 1;
    a.handle.done();
    expect(b.running).toBe(1);
    a.running -= 1;
    a.handle.done();
    expect(b.running).toBe(2);
    expect(s.shares().map((share) => share.tenant)).toEqual(['b']);
  });

  it('without a capacity, never holds a call back', () => {
    const { s } = scheduler(Infinity);
    const log: string[] = [];
    const a = new FakeQueue(s, 'a', 'a/l', log);
    a.add(500);
    expect(a.running).toBe(500);
  });
});
