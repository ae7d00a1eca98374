import * as m001 from './001-core';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Every migration this build knows, in order. Append only; never edit one that has shipped. */
export const MIGRATIONS: readonly Migration[] = [{ version: 1, ...m001 }];
