import { addDays, type IsoDate } from '../../domain/dates';
import { toYearMonthNameDay } from '../../employees/validation';

/**
 * Realistic, deterministic staff for the employee-interface simulator: a fixed cast the tests name
 * (flexible and not, furloughed, IR35, former, managers, every residency status, names needing
 * Unicode) followed by N generated people from a seeded PRNG.
 */

export type SimRecord = Record<string, unknown>;

export interface SimEmployee extends SimRecord {
  EmployeeID: number;
  EmployeeNumber: string;
  FirstName: string;
  LastName: string;
  StartDate: string;
  LeaveDate: string | null;
  LastModified: string;
}

export interface SimData {
  employees: SimEmployee[];
  employments: SimRecord[];
  accruals: SimRecord[];
  divisions: SimRecord[];
  sources: SimRecord[];
  locations: SimRecord[];
}

export interface SeedOptions {
  /** How many generated employees after the fixed cast (default 40). */
  readonly employees?: number;
  readonly seed?: number;
  /** "Today" for residency expiry dates and accrual StartDateTime (default: the real date, UTC). */
  readonly today?: IsoDate;
}

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['Oliver', 'Amelia', 'Siân', 'Chloé', 'Eoin', 'Aoife', 'Mohammed', 'Priya', 'Kacper', 'Zuzanna', 'Dawid', 'Ana', 'João', 'Inês', 'Jürgen', 'Åsa', 'Ciarán', 'Niamh', 'Tomás', 'Gráinne', 'Emma', 'Jack', 'Isla', 'Noah', 'Ewa', 'Bogdan', 'Mária', 'Lucía', 'Thảo', 'Đức'];
const LAST = ['Smith', 'Jones', 'Williams', 'Brown', 'Taylor', 'Murphy', 'Kelly', "O'Brien", 'Ní Bhriain', 'Nowak', 'Kowalczyk', 'Wójcik', 'Santos', 'Gonçalves', 'Schröder', 'Lindqvist', 'Patel', 'Khan', 'Ó Briain', 'MacGiolla', 'Popescu', 'Horváth', 'Fernández', 'Trần', 'Lê', 'Evans', 'Hughes', 'Walsh', 'Byrne', 'Ryan'];
const JOBS = ['Bartender', 'Chef de Partie', 'Kitchen Porter', 'Server', 'Host', 'Sous Chef', 'Barista', 'Supervisor'];

export const SIM_LOCATIONS: SimRecord[] = [
  { LocationID: 101, Description: 'The Crown, Islington', Country: 'UK', Area: '', AccountingSystemCode: 'LON-ISL', LocationGUID: '0f7c1d5e-6a0b-4c1e-9a51-101000000101' },
  { LocationID: 102, Description: 'Temple Bar', Country: 'Ireland', Area: 'Inner Dublin', AccountingSystemCode: 'DUB-TB', LocationGUID: '0f7c1d5e-6a0b-4c1e-9a51-102000000102' },
  { LocationID: 103, Description: 'St Helier Quay', Country: 'Jersey', Area: '', AccountingSystemCode: 'JSY-SH', LocationGUID: '0f7c1d5e-6a0b-4c1e-9a51-103000000103' },
  { LocationID: 104, Description: 'Blackrock', Country: 'Ireland', Area: 'Outer Dublin', AccountingSystemCode: 'DUB-BR', LocationGUID: '0f7c1d5e-6a0b-4c1e-9a51-104000000104' },
];

export const SIM_DIVISIONS: SimRecord[] = [
  { DivisionId: 1, DivisionName: 'Bar', AccountingSystemCode: 'BAR', DivisionGUID: '5d1e0a52-1111-4b7e-8f00-000000000001' },
  { DivisionId: 2, DivisionName: 'Kitchen', AccountingSystemCode: 'KIT', DivisionGUID: '5d1e0a52-1111-4b7e-8f00-000000000002' },
  { DivisionId: 3, DivisionName: 'Front of House', AccountingSystemCode: 'FOH', DivisionGUID: '5d1e0a52-1111-4b7e-8f00-000000000003' },
  { DivisionId: 4, DivisionName: 'Management', AccountingSystemCode: 'MGT', DivisionGUID: '5d1e0a52-1111-4b7e-8f00-000000000004' },
];

export const SIM_SOURCES: SimRecord[] = [
  { SourceDescription: 'Walk-in' },
  { SourceDescription: 'Staff referral' },
  { SourceDescription: 'Job board' },
  { SourceDescription: 'Agency' },
  { SourceDescription: 'Company website' },
];

interface CastMember {
  id: number;
  first: string;
  last: string;
  knownAs?: string;
  job: string;
  division: number;
  location: number;
  managerId: number | null;
  flexible: boolean;
  ir35?: boolean;
  furloughed?: boolean;
  former?: boolean;
  hours: number;
  /** Residency: [status, days to expiry relative to today] */
  residency?: ['settled', string] | ['pre-settled', number] | ['tlr', number];
  units: number;
  unitType: 'Days' | 'Hours';
}

/** The fixed cast: tests refer to these people by id. */
export const CAST: readonly CastMember[] = [
  { id: 1001, first: 'Siobhán', last: 'Ó Súilleabháin', job: 'General Manager', division: 4, location: 101, managerId: null, flexible: false, hours: 45, residency: ['settled', '12345678901234567890'], units: 12.5, unitType: 'Days' },
  { id: 1002, first: 'Zoë', last: 'Müller', job: 'Server', division: 3, location: 101, managerId: 1001, flexible: true, furloughed: true, hours: 18.5, residency: ['pre-settled', 30], units: 42.75, unitType: 'Hours' },
  { id: 1003, first: 'Łukasz', last: 'Wiśniewski', job: 'Consultant Chef', division: 2, location: 102, managerId: 1008, flexible: false, ir35: true, hours: 20, residency: ['tlr', 90], units: 0, unitType: 'Days' },
  { id: 1004, first: 'José', last: 'García-Núñez', job: 'Bartender', division: 1, location: 102, managerId: 1008, flexible: true, former: true, hours: 0, units: -1.5, unitType: 'Days' },
  { id: 1005, first: 'Björn', last: 'Ødegaard', job: 'Kitchen Porter', division: 2, location: 101, managerId: 1001, flexible: false, hours: 37.5, units: 8, unitType: 'Days' },
  { id: 1006, first: 'Nguyễn', last: 'Thị Hương', knownAs: 'Huong', job: 'Barista', division: 3, location: 103, managerId: 1001, flexible: true, hours: 24, residency: ['pre-settled', -5], units: 16, unitType: 'Hours' },
  { id: 1007, first: 'Renée', last: "O'Sullivan", job: 'Host', division: 3, location: 104, managerId: 1008, flexible: true, hours: 16, residency: ['tlr', 60], units: 3.25, unitType: 'Days' },
  { id: 1008, first: 'François', last: 'Dvořák', job: 'Operations Manager', division: 4, location: 102, managerId: null, flexible: false, hours: 40, residency: ['settled', '00042'], units: 20, unitType: 'Days' },
];

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

function round(n: number, places = 2): number {
  const f = 10 ** places;
  return Math.round(n * f) / f;
}

function residencyFields(r: CastMember['residency'], today: IsoDate): SimRecord {
  const base: SimRecord = { SettledStatus: 'No', SettledStatusShareCode: '', PreSettledStatus: 'No', PreSettledStatusExpiryDate: '', TemporaryLeaveToRemain: 'No', TemporaryLeaveToRemainExpiryDate: '' };
  if (!r) return { ...base, SettledStatus: '', PreSettledStatus: '', TemporaryLeaveToRemain: '' };
  if (r[0] === 'settled') return { ...base, SettledStatus: 'Yes', SettledStatusShareCode: r[1] };
  if (r[0] === 'pre-settled') return { ...base, PreSettledStatus: 'Yes', PreSettledStatusExpiryDate: toYearMonthNameDay(addDays(today, r[1])) };
  return { ...base, TemporaryLeaveToRemain: 'Yes', TemporaryLeaveToRemainExpiryDate: toYearMonthNameDay(addDays(today, r[1])) };
}

function accrualFor(m: Pick<CastMember, 'id' | 'flexible' | 'units' | 'unitType' | 'hours'>, today: IsoDate, rand: () => number): SimRecord {
  const common = { EmployeeID: m.id, ElementName: 'Holiday Balance', ElementType: 'ACCRUAL', StartDateTime: `${today}T00:00:00`, Units: m.units, UnitType: m.unitType, IsFlexible: m.flexible ? 'Yes' : 'No' };
  if (!m.flexible) return { ...common, AvgSummary: '0', AvgTime: '0', AvgDays: '0', DayRate: '0' };
  const days = round(2 + rand() * 3, 1);
  const perDay = round(Math.max(1, m.hours) / days, 2);
  return { ...common, AvgSummary: perDay, AvgTime: round(m.hours, 2), AvgDays: days, DayRate: round(perDay * (11.44 + Math.floor(rand() * 400) / 100), 2) };
}

function build(m: CastMember, today: IsoDate, rand: () => number, byId: Map<number, CastMember>, faid: (id: number) => string): { employee: SimEmployee; employment: SimRecord; accrual: SimRecord } {
  const startDate = addDays(today, -(200 + Math.floor(rand() * 2500)));
  const leaveDate = m.former ? addDays(today, -(10 + Math.floor(rand() * 300))) : null;
  const modified = addDays(today, -(30 + Math.floor(rand() * 300)));
  const number = `E${m.id}`;
  const employee: SimEmployee = {
    EmployeeID: m.id,
    EmployeeNumber: number,
    FirstName: m.first,
    LastName: m.last,
    ...(m.knownAs ? { KnownAs: m.knownAs } : {}),
    EmailAddress: `${m.id}@staff.example`,
    StartDate: startDate,
    LeaveDate: leaveDate,
    IR35: m.ir35 ?? false,
    IsEmployeeFurlough: m.furloughed ?? false,
    FurLoughContractHours: m.hours,
    ...residencyFields(m.residency, today),
    LastModified: `${modified}T09:00:00`,
  };
  const manager = m.managerId === null ? null : byId.get(m.managerId) ?? null;
  const employment: SimRecord = {
    EmployeeID: m.id,
    EmployeeNumber: number,
    JobTitle: m.job,
    DivisionId: m.division,
    LocationID: m.location,
    StartDate: startDate,
    EndDate: leaveDate,
    IR35: m.ir35 ?? false,
    ReportsTo: manager ? `${manager.first} ${manager.last}` : '',
    ReportsToEmployeeNumber: manager ? `E${manager.id}` : '',
    ReportsToFAID: manager ? faid(manager.id) : '',
    LastModified: `${modified}T09:00:00`,
  };
  return { employee, employment, accrual: accrualFor(m, today, rand) };
}

/** Deterministic for a given seed, count and today. */
export function generateStaff(options: SeedOptions = {}): SimData {
  const today = options.today ?? (new Date().toISOString().slice(0, 10) as IsoDate);
  const rand = prng(options.seed ?? 42);
  const count = options.employees ?? 40;
  const members: CastMember[] = [...CAST];
  const managers = CAST.filter((c) => c.managerId === null).map((c) => c.id);
  for (let i = 0; i < count; i++) {
    const id = 2000 + i;
    // One in twenty-five generated people manages others; the rest report to a manager.
    const isManager = i % 25 === 0;
    const roll = rand();
    const residency: CastMember['residency'] =
      roll < 0.2 ? ['settled', String(Math.floor(rand() * 1e9)).padStart(9, '0')] : roll < 0.3 ? ['pre-settled', Math.floor(rand() * 720) - 30] : roll < 0.35 ? ['tlr', Math.floor(rand() * 400) - 10] : undefined;
    const flexible = rand() < 0.45;
    const member: CastMember = {
      id,
      first: pick(rand, FIRST),
      last: pick(rand, LAST),
      job: isManager ? 'Assistant Manager' : pick(rand, JOBS),
      division: isManager ? 4 : 1 + Math.floor(rand() * 3),
      location: (SIM_LOCATIONS[Math.floor(rand() * SIM_LOCATIONS.length)]!.LocationID as number),
      managerId: isManager ? pick(rand, CAST.filter((c) => c.managerId === null)).id : pick(rand, managers),
      flexible,
      ir35: rand() < 0.04,
      furloughed: rand() < 0.06,
      former: rand() < 0.12,
      hours: flexible ? round(8 + rand() * 30, 1) : pick(rand, [16, 20, 30, 37.5, 40]),
      residency,
      units: round(rand() * 28 - 2, 2),
      unitType: rand() < 0.7 ? 'Days' : 'Hours',
    };
    members.push(member);
    if (isManager) managers.push(id);
  }
  const byId = new Map(members.map((m) => [m.id, m]));
  const faid = (id: number): string => `FA${String(id * 7919).padStart(8, '0')}`;
  const data: SimData = { employees: [], employments: [], accruals: [], divisions: SIM_DIVISIONS.map((d) => ({ ...d })), sources: SIM_SOURCES.map((s) => ({ ...s })), locations: SIM_LOCATIONS.map((l) => ({ ...l })) };
  for (const m of members) {
    const built = build(m, today, rand, byId, faid);
    data.employees.push(built.employee);
    data.employments.push(built.employment);
    data.accruals.push(built.accrual);
  }
  return data;
}
