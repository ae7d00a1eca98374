import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { environmentOverrides, loadConfig, maskConfig, parseConfig } from '../../src/config/load';
import { ConfigError } from '../../src/errors';
import { appliedMigrations, migrate, openDatabase } from '../../src/store/database';
import { TILL_MIGRATIONS as MIGRATIONS } from '../../src/store/migrations';
import { dataDirFor } from '../../src/ops/secrets';
import { REPO_ROOT } from '../helpers/child-agent';
import { tempDir } from '../helpers/fixtures';

describe('migrations', () => {
  it('applies every migration once, records it, and is idempotent', () => {
    const file = path.join(tempDir(), 'a.db');
    openDatabase(file).close();
    const db = openDatabase(file);
    assert.deepEqual(appliedMigrations(db).map((m) => m.version), MIGRATIONS.map((m) => m.version));
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('synchronous', { simple: true }), 2); // FULL
    db.close();
  });

  it('refuses a database with a migration this build does not know', () => {
    const file = path.join(tempDir(), 'b.db');
    const db = openDatabase(file);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, ?)').run('from-the-future', new Date().toISOString());
    db.close();
    assert.throws(() => openDatabase(file), /migrations this agent does not know \(999-from-the-future\)/);
  });

  it('rolls a failing migration back whole and records nothing', () => {
    const file = path.join(tempDir(), 'c.db');
    const db = new Database(file);
    const broken = [...MIGRATIONS, { version: 900, name: 'broken', sql: 'CREATE TABLE half_done (x); INSERT INTO no_such_table VALUES (1);' }];
    assert.throws(() => migrate(db, broken), /no such table/);
    assert.deepEqual(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half_done'").get(), { n: 0 });
    assert.ok(!appliedMigrations(db).some((m) => m.version === 900));
    assert.equal(appliedMigrations(db).length, MIGRATIONS.length);
    db.close();
  });
});

describe('configuration', () => {
  it('works with no file at all: defaults for every key', () => {
    const config = loadConfig({ env: { HOME: '/home/site', XDG_DATA_HOME: '/data/xdg' } });
    assert.equal(config.webhook.host, '127.0.0.1');
    assert.equal(config.webhook.port, 8787);
    assert.equal(config.webhook.path, '/webhooks/menu-cycles');
    assert.equal(config.webhook.maxBodyBytes, 64 * 1024 * 1024);
    assert.equal(config.defaultTimezone, 'Europe/London');
    if (process.platform === 'linux') assert.equal(config.dataDir, '/data/xdg/pos-sync-agent');
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.webhook));
  });

  it('layers file < environment, and parses environment values as JSON where they are', () => {
    const dir = tempDir();
    const file = path.join(dir, 'site.json');
    fs.writeFileSync(file, JSON.stringify({ dataDir: 'data', webhook: { port: 9000, expectedOrigin: 'menus.example.com' }, locations: { '3021': { timezone: 'Europe/Dublin' } } }));
    const config = loadConfig({ file, env: { POS_SYNC__webhook__port: '9100', POS_SYNC__webhook__bearerToken: 's3cret-token-value', POS_SYNC__sync__baseline: 'operator' } });
    assert.equal(config.dataDir, path.join(dir, 'data')); // relative to the config file
    assert.equal(config.webhook.port, 9100);
    assert.equal(config.webhook.expectedOrigin, 'menus.example.com');
    assert.equal(config.webhook.bearerToken, 's3cret-token-value');
    assert.equal(config.sync.baseline, 'operator');
    assert.equal(config.locations['3021']!.timezone, 'Europe/Dublin');
    assert.deepEqual(environmentOverrides({ POS_SYNC__a__b: 'true', POS_SYNC__c: 'text', OTHER: '1' }), { a: { b: true }, c: 'text' });
  });

  it('reads a file written by a Windows editor: byte-order mark and CRLF line ends', () => {
    const dir = tempDir();
    const file = path.join(dir, 'site.json');
    fs.writeFileSync(file, `\uFEFF${JSON.stringify({ dataDir: 'data', webhook: { port: 9001 } }, null, 2).replace(/\n/g, '\r\n')}\r\n`);
    const config = loadConfig({ file, env: {} });
    assert.equal(config.webhook.port, 9001);
    assert.equal(config.dataDir, path.join(dir, 'data'));
    // The folder and secrets file are found the same way before validation (the secrets commands, Electron).
    assert.equal(dataDirFor({ file, env: {} }), path.join(dir, 'data'));
    // A mark anywhere but first is still an error, as is any other stray character.
    fs.writeFileSync(file, `{"webhook":\uFEFF{"port":9001}}`);
    assert.throws(() => loadConfig({ file, env: {} }), /is not valid JSON/);
  });

  it('masks secrets whenever the config is printed', () => {
    const config = parseConfig({ dataDir: '/d', webhook: { bearerToken: 'abc-secret-123' } });
    const text = JSON.stringify(maskConfig(config));
    assert.ok(!text.includes('abc-secret-123'));
    assert.match(text, /"bearerToken":"\*\*\*\*\*\*\*\*"/);
  });

  for (const [input, field] of [
    [{ dataDir: '/d', webhook: { port: 70000 } }, 'webhook.port'],
    [{ dataDir: '/d', webhook: { prot: 1 } }, 'webhook'],
    [{ dataDir: '/d', defaultTimezone: 'Mars/Olympus' }, 'defaultTimezone'],
    [{ dataDir: '/d', locations: { abc: {} } }, 'locations.abc'],
    [{ dataDir: '/d', locations: { '1': { timezone: 'Nowhere' } } }, 'locations.1.timezone'],
    [{ dataDir: '/d', webhook: { tls: { certFile: 'x' } } }, 'webhook.tls'],
    [{ dataDir: '/d', sync: { baseline: 'sometimes' } }, 'sync.baseline'],
    [{ dataDir: '' }, 'dataDir'],
  ] as const) {
    it(`refuses an invalid config naming ${field}`, () => {
      assert.throws(
        () => parseConfig(input),
        (err: unknown) => err instanceof ConfigError && err.field === field && err.message.startsWith(`invalid configuration: ${field}:`),
      );
    });
  }

  it('stops start-up with the field named and exit code 3', () => {
    const dir = tempDir();
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ dataDir: dir, webhook: { port: 'eighty' } }));
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), 'serve', '--config', file], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 3);
    assert.match(result.stderr, /invalid configuration: webhook\.port:/);
    assert.ok(!result.stderr.includes('    at '), 'no stack trace');
  });
});
