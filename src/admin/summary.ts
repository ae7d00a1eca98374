/**
 * Turns the status read model into what a manager reads: a traffic light and plain sentences. Pure and
 * free of Node imports, because the renderer bundles this same file (one wording for the window and
 * the tray).
 */

/** The shape of LocationStatus as it travels as JSON (see src/store/queries.ts). */
export interface StatusLocation {
  readonly locationId: number;
  readonly locationName: string | null;
  readonly currency: string | null;
  readonly lastChangeSequence: number | null;
  readonly lastAppliedAt: string | null;
  readonly firstSeenAt: string;
  readonly waiting: readonly {
    readonly inboxId: number;
    readonly changeSequence: number;
    readonly parentChangeSequence: number;
    readonly receivedAt: string;
    readonly reason: 'waiting' | 'fork' | 'needs-adoption';
    readonly waitingFor: number | null;
    readonly note: string | null;
  }[];
  readonly conflicts: number;
  readonly warnings: number;
  readonly recentWarnings: readonly { readonly id: number; readonly inboxId: number; readonly changeSequence: number; readonly path: string; readonly message: string; readonly createdAt: string }[];
}

export type Light = 'green' | 'amber' | 'red';

export interface LocationSummary {
  readonly locationId: number;
  readonly light: Light;
  /** Plain sentences, most important first. */
  readonly lines: readonly string[];
}

export interface Summary {
  readonly light: Light;
  readonly headline: string;
  readonly locations: readonly LocationSummary[];
}

export interface SummaryOptions {
  readonly now: Date;
  readonly paused: boolean;
  /** A gap older than this turns red: the missing update is probably not coming by itself. */
  readonly gapAlertMinutes: number;
  /** How a time is shown (the window: the browser's locale; tests: fixed). */
  readonly formatTime: (iso: string) => string;
}

const RANK: Record<Light, number> = { green: 0, amber: 1, red: 2 };

function worst(a: Light, b: Light): Light {
  return RANK[a] >= RANK[b] ? a : b;
}

export function locationLabel(l: Pick<StatusLocation, 'locationId' | 'locationName'>): string {
  return l.locationName ? `${l.locationName} (${l.locationId})` : `Location ${l.locationId}`;
}

export function summariseLocation(l: StatusLocation, options: SummaryOptions): LocationSummary {
  const lines: string[] = [];
  let light: Light = 'green';
  const gapAlertMs = options.gapAlertMinutes * 60_000;
  for (const w of l.waiting) {
    const since = options.formatTime(w.receivedAt);
    if (w.reason === 'needs-adoption') {
      light = worst(light, 'red');
      lines.push(`Update ${w.changeSequence} is the first one seen here and waits for an operator to accept it (force-apply) — received ${since}.`);
    } else if (w.reason === 'fork') {
      light = worst(light, 'red');
      lines.push(`Update ${w.changeSequence} continues from ${w.parentChangeSequence}, which is not the update applied here — contact support before forcing it.`);
    } else {
      const age = options.now.getTime() - Date.parse(w.receivedAt);
      light = worst(light, age > gapAlertMs ? 'red' : 'amber');
      lines.push(
        `Update ${w.changeSequence} is waiting for update ${w.waitingFor ?? w.parentChangeSequence} from head office since ${since} — if it does not arrive, contact support.`,
      );
    }
  }
  if (l.conflicts > 0) {
    light = worst(light, 'red');
    lines.push(`${l.conflicts} update${l.conflicts === 1 ? '' : 's'} arrived with a change number already used for different content — contact support.`);
  }
  if (l.warnings > 0) {
    light = worst(light, 'amber');
    lines.push(`${l.warnings} warning${l.warnings === 1 ? '' : 's'} from applied updates (some items were skipped).`);
  }
  if (l.lastChangeSequence === null && l.waiting.length === 0) {
    light = worst(light, 'amber');
    lines.push('Nothing applied yet.');
  }
  if (lines.length === 0) lines.push(`Up to date: update ${l.lastChangeSequence} applied ${l.lastAppliedAt ? options.formatTime(l.lastAppliedAt) : ''}.`.replace(' .', '.'));
  return { locationId: l.locationId, light, lines };
}

export function summarise(locations: readonly StatusLocation[], options: SummaryOptions): Summary {
  const perLocation = locations.map((l) => summariseLocation(l, options));
  let light: Light = perLocation.reduce<Light>((acc, s) => worst(acc, s.light), 'green');
  let headline: string;
  if (locations.length === 0) {
    light = 'amber';
    headline = 'No updates received yet from head office.';
  } else if (light === 'green') {
    headline = locations.length === 1 ? 'The till is up to date.' : `All ${locations.length} locations are up to date.`;
  } else {
    const behind = perLocation.filter((s) => s.light !== 'green').length;
    headline =
      light === 'red'
        ? `${behind} location${behind === 1 ? ' needs' : 's need'} attention.`
        : `${behind} location${behind === 1 ? ' has' : 's have'} something to check.`;
  }
  if (options.paused) {
    light = worst(light, 'amber');
    headline = `Applying updates is paused (deliveries are still received). ${headline}`;
  }
  return { light, headline, locations: perLocation };
}
