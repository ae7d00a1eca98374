import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import semver from 'semver';

// The bin's own checker (plain CommonJS, so an old Node can run it).
const { satisfies, versionProblem } = require('../../../bin/node-version.cjs') as {
  satisfies(version: string, range: string): boolean | null;
  versionProblem(version: string, range: unknown, execPath?: string): string | null;
};

const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('the bin\'s Node version check', () => {
  it('understands package.json\'s engines.node and accepts the Node running the tests', () => {
    const range = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    assert.notEqual(satisfies('0.0.0', range), null, `engines.node ${range} is not understood by bin/node-version.cjs`);
    assert.equal(satisfies(process.versions.node, range), semver.satisfies(process.versions.node, range));
    assert.equal(satisfies('20.20.2', range), semver.satisfies('20.20.2', range));
  });

  it('agrees with npm\'s semver on the range forms npm documents', () => {
    const cases: [string, string, boolean][] = [
      ['22.13.0', '>=22.13', true],
      ['22.12.9', '>=22.13', false],
      ['20.20.2', '>=22.13', false],
      ['24.0.0', '>=22.13 <23 || >=24', true],
      ['23.5.0', '>=22.13 <23 || >=24', false],
      ['22.20.0', '^22.13.0', true],
      ['23.0.0', '^22.13.0', false],
      ['22.13.9', '~22.13', true],
      ['22.14.0', '~22.13', false],
      ['22.99.0', '22.x', true],
      ['22.0.0', '22', true],
      ['21.9.9', '22', false],
      ['24.3.0', '22.13 - 24', true],
      ['25.0.0', '22.13 - 24', false],
      ['24.11.1', '>= 24.11.1', true],
      ['24.11.1', '>24.11', false],
      ['24.12.0', '>24.11', true],
      ['24.11.5', '<=24.11', true],
      ['24.12.0', '<=24.11', false],
      ['1.0.0', '*', true],
    ];
    for (const [version, range, expected] of cases) {
      assert.equal(semver.satisfies(version, range), expected, `reference ${version} ${range}`);
      assert.equal(satisfies(version, range), expected, `${version} against ${range}`);
    }
  });

  it('agrees with semver on generated versions and ranges (edges weighted: 0, the range\'s own bounds)', () => {
    const part = fc.oneof(fc.constantFrom(0, 1, 13, 22, 24), fc.nat(40));
    const version = fc.tuple(part, part, part).map((v) => v.join('.'));
    const partial = fc.oneof(
      fc.tuple(part).map((v) => v.join('.')),
      fc.tuple(part, part).map((v) => v.join('.')),
      fc.tuple(part, part, part).map((v) => v.join('.')),
      fc.tuple(part).map(([m]) => `${m}.x`),
    );
    const op = fc.constantFrom('>=', '>', '<=', '<', '=', '', '^', '~');
    const comparator = fc.tuple(op, partial).map(([o, v]) => `${o}${v}`);
    const alternative = fc.oneof(
      fc.array(comparator, { minLength: 1, maxLength: 3 }).map((c) => c.join(' ')),
      fc.tuple(partial, partial).map(([a, b]) => `${a} - ${b}`),
    );
    const range = fc.array(alternative, { minLength: 1, maxLength: 3 }).map((a) => a.join(' || '));
    let bothWays = { yes: 0, no: 0 };
    fc.assert(
      fc.property(version, range, (v, r) => {
        const expected = semver.satisfies(v, r);
        bothWays = expected ? { ...bothWays, yes: bothWays.yes + 1 } : { ...bothWays, no: bothWays.no + 1 };
        assert.equal(satisfies(v, r), expected, `${v} against ${r}`);
      }),
      { numRuns: 3000 },
    );
    // The generators reach both answers often enough to mean something.
    assert.ok(bothWays.yes > 100 && bothWays.no > 100, JSON.stringify(bothWays));
  });

  it('prints one line naming the Node found, the versions needed and where to get one', () => {
    const line = versionProblem('20.20.2', '>=22.13', '/usr/bin/node');
    assert.ok(line);
    assert.equal(line.includes('\n'), false);
    assert.match(line, /20\.20\.2/);
    assert.match(line, />=22\.13/);
    assert.match(line, /\/usr\/bin\/node/);
    assert.match(line, /https:\/\/nodejs\.org\//);
    assert.equal(versionProblem('24.11.1', '>=22.13'), null);
    // A range the checker does not understand turns nobody away (npm itself still warns on install).
    assert.equal(versionProblem('20.0.0', 'not a range'), null);
    assert.equal(versionProblem('20.0.0', undefined), null);
  });
});
