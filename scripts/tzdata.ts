/**
 * `npm run tzdata`: writes src/domain/tz/table.ts, the agent's own copy of every timezone's UTC
 * offsets from 2000 to 2100, read from the IANA database in this Node's ICU. The running agent reads
 * the table instead of asking Intl, whose formatters page ICU's locale data and code into the process
 * for good (docs/performance.md). Run it when Node's ICU brings a new tz release: the table test
 * (test/unit/domain/tz-table.test.ts) fails until then, naming both releases.
 */
import fs from 'node:fs';
import path from 'node:path';
import { intlOffsetIntervals } from '../src/domain/tz/intl-offsets';
import { TABLE_FROM_MS, TABLE_TO_MS, encodeRule, tableZoneNames } from '../src/domain/tz/encoding';

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
