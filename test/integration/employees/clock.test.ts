import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmployeeClient } from '../../../src/employees/client';
import { clockWatch, isClockWrong } from '../../../src/clock';
import { startSimulator, staffConfig } from './sim';

describe("the employee interface's Date header checks this PC's clock", () => {
  it('reports no skew when the clocks agree', async () => {
    clockWatch.clear();
    const { running } = await startSimulator();
    await new EmployeeClient(staffConfig(running.url).employees!).divisions();
    const seen = clockWatch.observations().find((o) => o.source === 'the employee interface')!;
    assert.ok(seen, 'no observation recorded');
    assert.ok(!isClockWrong(seen, 120_000), JSON.stringify(seen));
  });

  it('detects a PC clock ten minutes slow', async () => {
    clockWatch.clear();
    const { running } = await startSimulator({ clockOffsetMs: 10 * 60_000 });
    await new EmployeeClient(staffConfig(running.url).employees!).divisions();
    const seen = clockWatch.observations().find((o) => o.source === 'the employee interface')!;
    assert.ok(Math.abs(seen.skewMs - 600_000) <= seen.uncertaintyMs + 1000, JSON.stringify(seen));
    assert.ok(isClockWrong(seen, 120_000));
  });
});
