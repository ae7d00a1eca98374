import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { timeZoneKeyName, windowsZone } from '../../../src/clock';
import { cldrWindowsZones } from '../../../src/domain/tz/cldr-windows-zones';
import { WINDOWS_ZONES, WINDOWS_ZONES_CLDR } from '../../../src/domain/tz/windows-zones';
import { tableZones } from '../../../src/domain/utc-offsets';

/**
 * A Windows PC's timezone is read from the registry by Windows' own name and mapped to an IANA zone
 * with CLDR's data (src/clock.ts), as ICU does on Windows, so that the agent builds no ICU formatter
 * there either. test/windows/timezone.test.ts holds it to Intl's answer under Wine.
 */
describe('Windows timezone names', () => {
  it('the table is CLDR’s world mapping, of the CLDR release this Node carries (else: npm run tzdata)', () => {
    const cldr = cldrWindowsZones();
    assert.equal(WINDOWS_ZONES_CLDR, cldr.cldr, 'the table was written from another cldr-core than the one installed: run npm run tzdata');
    assert.equal(WINDOWS_ZONES_CLDR, process.versions.cldr!.split('.')[0], `Node carries CLDR ${process.versions.cldr}, the table ${WINDOWS_ZONES_CLDR}: install that cldr-core and run npm run tzdata`);
    assert.deepEqual(WINDOWS_ZONES.map(([w, z]) => [w, z]), cldr.pairs);
    assert.ok(WINDOWS_ZONES.length > 100, `${WINDOWS_ZONES.length} names`);
  });

  it('every name maps to a zone of the agent’s own table, but the fixed offsets Etc/GMT±N (Intl’s reading then)', () => {
    const fixed: string[] = [];
    for (const [name, iana] of WINDOWS_ZONES) {
      const zone = windowsZone(name);
      if (/^Etc\/GMT[+-]\d+$/.test(iana)) {
        // Intl lists no Etc/GMT±N zone, so the table (made from Intl's list) has none: a PC set to one
        // of these falls back to Intl's reading of its timezone.
        assert.equal(zone, null, name);
        fixed.push(name);
      } else {
        assert.ok(zone !== null && tableZones().has(zone), `${name} -> ${zone}`);
      }
    }
    assert.deepEqual(fixed.sort(), ['Dateline Standard Time', 'UTC+12', 'UTC+13', 'UTC-02', 'UTC-08', 'UTC-09', 'UTC-11']);
    assert.equal(windowsZone('GMT Standard Time'), 'Europe/London');
    assert.equal(windowsZone('Greenwich Standard Time'), 'Atlantic/Reykjavik');
    assert.equal(windowsZone('W. Europe Standard Time'), 'Europe/Berlin');
    assert.equal(windowsZone('UTC'), 'UTC');
    assert.equal(windowsZone('Not A Windows Zone'), null);
    assert.equal(windowsZone('constructor'), null);
    assert.equal(windowsZone(null), null);
  });

  it('reads TimeZoneKeyName from reg.exe’s output, whatever its line ends and spacing, unless automatic DST is off', () => {
    const out = (name: string, eol: string): string =>
      [``, `HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\TimeZoneInformation`, `    TimeZoneKeyName    REG_SZ    ${name}`, ``, ``].join(eol);
    for (const eol of ['\r\n', '\n']) {
      assert.equal(timeZoneKeyName(out('GMT Standard Time', eol)), 'GMT Standard Time');
      assert.equal(timeZoneKeyName(out('UTC', eol)), 'UTC');
    }
    // The whole key (`reg query KEY`) lists more values; the one asked for is found among them.
    assert.equal(timeZoneKeyName('    StandardName    REG_SZ    @tzres.dll,-112\r\n    TimeZoneKeyName    REG_SZ    Romance Standard Time\r\n    DynamicDaylightTimeDisabled    REG_DWORD    0x0\r\n'), 'Romance Standard Time');
    // Automatic daylight saving time off: standard time all year, which no IANA zone of that name is.
    assert.equal(timeZoneKeyName('    TimeZoneKeyName    REG_SZ    GMT Standard Time\r\n    DynamicDaylightTimeDisabled    REG_DWORD    0x1\r\n'), null);
    assert.equal(timeZoneKeyName('    DynamicDaylightTimeDisabled    REG_DWORD    0x00000001\r\n    TimeZoneKeyName    REG_SZ    GMT Standard Time\r\n'), null);
    assert.equal(timeZoneKeyName('    TimeZoneKeyName    REG_SZ    GMT Standard Time\r\n    DynamicDaylightTimeDisabled    REG_DWORD    0x0\r\n'), 'GMT Standard Time');
    assert.equal(timeZoneKeyName('    TimeZoneKeyName    REG_SZ    GMT Standard Time\r\n    DynamicDaylightTimeDisabled    REG_DWORD    0x10\r\n'), null);
    assert.equal(timeZoneKeyName('ERROR: The system was unable to find the specified registry key or value.\r\n'), null);
    assert.equal(timeZoneKeyName(''), null);
  });
});
