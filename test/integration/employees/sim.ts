import { after } from 'node:test';
import { createEmployeeApi, type EmployeeApiSimulator, type RunningSimulator, type SimulatorOptions } from '../../../src/dev/employee-api/app';
import type { Config } from '../../../src/config/schema';
import type { IsoDate } from '../../../src/domain/dates';
import { testConfig } from '../../helpers/fixtures';

/** A fixed "today" so residency windows are deterministic. */
export const SIM_TODAY = '2026-03-02' as IsoDate;

/** Starts the simulator on loopback port 0; closed when the test file ends. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<{ sim: EmployeeApiSimulator; running: RunningSimulator }> {
  const sim = createEmployeeApi({ today: SIM_TODAY, employees: 40, organisationId: 42, ...options });
  const running = await sim.listen(0);
  after(() => running.close());
  return { sim, running };
}

/** A test config pointing at the simulator, with short back-off so failure tests stay fast. */
export function staffConfig(url: string, employees: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Readonly<Config> {
  return testConfig({
    admin: { enabled: false },
    ...extra,
    employees: { baseUrl: url, organisationId: 42, timeoutMs: 2000, retries: 2, retryBaseDelayMs: 5, retryMaxDelayMs: 2000, syncIntervalMinutes: 0, ...employees },
  });
}
