// Which test files need root or Debian packages as a whole: `npm run test:system` runs them (with the
// files that declare single such tests through test/helpers/system.ts `needs`), `npm test` leaves them
// out and says so. Paths relative to the project; a folder means every test file below it.
export const SYSTEM_FILES = [
  ['test/system', 'a C compiler and libsqlite3-dev (an SQLite extension), python3'],
  ['test/browser', 'Chromium'],
  ['test/integration/ops/private-files.test.ts', 'root (a second OS user, groupadd)'],
  ['test/integration/install/systemd-unit.test.ts', 'systemd-analyze'],
  ['test/integration/till-integer-ranges.test.ts', 'unixODBC, the SQLite ODBC driver, python3-pyodbc'],
  ['test/integration/till-file-compat.test.ts', 'unixODBC, the SQLite ODBC driver, python3-pyodbc'],
  ['test/faults/storage.test.ts', 'root (a tmpfs mount), libfiu'],
  ['test/faults/body-file-power.test.ts', 'libfiu'],
  ['test/integration/prometheus-scrape.test.ts', 'Prometheus'],
  ['test/unit/packaging/monitoring.test.ts', 'promtool (Prometheus)'],
];

/** The marker of a file that declares single system tests. */
export const DECLARES_SYSTEM_TESTS = /from '[./]*helpers\/system'/;
