/**
 * `npm run tzdata`: writes src/domain/tz/table.ts, the agent's own copy of every timezone's UTC
 * offsets from 2000 to 2100, read from the IANA database in this Node's ICU, and
 * src/domain/tz/windows-zones.ts, the IANA zone CLDR gives each of Windows' timezone names for the
 * world (territory 001), read from the `cldr-core` package of the CLDR release this Node's ICU
 * carries (a Windows PC's timezone is read from the registry by that name, src/clock.ts). The running agent reads
 * the table instead of asking Intl, whose formatters page ICU's locale data and code into the process
 * for good (docs/performance.md). Run it when Node's ICU brings a new tz release: the table test
 * (test/unit/domain/tz-table.test.ts) fails until then, naming both releases.
 */
import fs from 'node:fs';
import path from 'node:path';
import { intlOffsetIntervals } from '../src/domain/tz/intl-offsets';
import { TABLE_FROM_MS, TABLE_TO_MS, encodeRule, tableZoneNames } from '../src/domain/tz/encoding';
import { cldrWindowsZones } from '../src/domain/tz/cldr-windows-zones';

const out = path.join(__dirname, '..', 'src', 'domain', 'tz', 'table.ts');
const rules: string[] = [];
const ruleIndex = new Map<string, number>();
const zones: string[] = [];
for (const zone of tableZoneNames()) {
  const rule = encodeRule(intlOffsetIntervals(zone, TABLE_FROM_MS, TABLE_TO_MS));
  let index = ruleIndex.get(rule);
  if (index === undefined) {
    index = rules.length;
    rules.push(rule);
    ruleIndex.set(rule, index);
  }
  zones.push(`${zone}=${index.toString(36)}`);
}
const text = `// Written by \`npm run tzdata\` (scripts/tzdata.ts) from Node ${process.versions.node}'s ICU ${process.versions.icu}; do not edit.
// Each rule: the offset at TABLE_FROM_MS, then per change the minutes since the previous one and the
// new offset, in minutes, base 36 (src/domain/tz/encoding.ts). Each zone names its rule by index.
import type { TzTable } from './encoding';

export const TZ_TABLE: TzTable = {
  tz: ${JSON.stringify(process.versions.tz)},
  zones: ${JSON.stringify(zones.join(' '))},
  rules: [
${rules.map((r) => `    ${JSON.stringify(r)},`).join('\n')}
  ],
};
`;
fs.writeFileSync(out, text);
console.log(`${path.relative(process.cwd(), out)}: ${zones.length} zones, ${rules.length} rules, tz ${process.versions.tz}, ${text.length} bytes`);

const windowsOut = path.join(__dirname, '..', 'src', 'domain', 'tz', 'windows-zones.ts');
const cldr = cldrWindowsZones();
const windowsText = `// Written by \`npm run tzdata\` (scripts/tzdata.ts) from cldr-core ${cldr.packageVersion} (CLDR ${cldr.cldr}); do not edit.
// Windows' timezone key names (the registry's TimeZoneKeyName) and the IANA zone CLDR gives each for
// the world (territory 001), as ICU maps them on Windows (src/clock.ts reads them).
export const WINDOWS_ZONES_CLDR = ${JSON.stringify(cldr.cldr)};

export const WINDOWS_ZONES: readonly (readonly [windows: string, iana: string])[] = [
${cldr.pairs.map(([w, z]) => `  [${JSON.stringify(w)}, ${JSON.stringify(z)}],`).join('\n')}
];
`;
fs.writeFileSync(windowsOut, windowsText);
console.log(`${path.relative(process.cwd(), windowsOut)}: ${cldr.pairs.length} Windows zones, CLDR ${cldr.cldr}`);
