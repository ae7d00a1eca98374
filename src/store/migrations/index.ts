import * as m001 from './001-core';
import * as m002 from './002-staff';
import * as m003 from './003-ops';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Every migration this build knows, in order. Append only; never edit one that has shipped. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, ...m001 },
  { version: 2, ...m002 },
  { version: 3, ...m003 },
];
