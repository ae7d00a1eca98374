import fs from 'node:fs';
import path from 'node:path';

/**
 * The world's (territory 001) Windows-to-IANA timezone mapping in the `cldr-core` package
 * (supplemental/windowsZones.json), sorted by Windows name: what `npm run tzdata` writes into
 * windows-zones.ts and what its test holds that file to. Development only: the running agent never
 * loads this module or the package.
 */
export function cldrWindowsZones(): { packageVersion: string; cldr: string; pairs: [windows: string, iana: string][] } {
  const dir = path.dirname(require.resolve('cldr-core/package.json'));
  const packageVersion = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const data = JSON.parse(fs.readFileSync(path.join(dir, 'supplemental', 'windowsZones.json'), 'utf8')) as {
    supplemental: { version: { _cldrVersion: string }; windowsZones: { mapTimezones: { mapZone: { _other: string; _type: string; _territory: string } }[] } };
  };
  const pairs = data.supplemental.windowsZones.mapTimezones
    .map((m) => m.mapZone)
    .filter((z) => z._territory === '001')
    // CLDR lists the zone's canonical name first where a territory has several (`_type` is space separated).
    .map((z): [string, string] => [z._other, z._type.split(' ')[0]!])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { packageVersion, cldr: data.supplemental.version._cldrVersion, pairs };
}
