import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { AgentCore } from '../../../src/core';
import { parseConfig } from '../../../src/config/load';
import { silentLogger } from '../../../src/log';
import { storeFilePath } from '../../../src/store/database';
import { runCli } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';

/**
 * A site that stops using staff lookups removes the `employees` section (docs/staff.md): what was
 * cached before is still personal data on the PC, and `staff purge` must erase it without the
 * section (it needs no employee interface). It refused, naming the missing section.
 */
describe('staff purge without an employees section', () => {
  it('erases the cached staff all the same', () => {
    const dir = tempDir('purge-unconfigured-');
    const dataDir = path.join(dir, 'data');
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir }));
    // What an agent with staff lookups left behind.
    const core = new AgentCore(parseConfig({ dataDir }), silentLogger);
    core.staffDb.prepare("INSERT INTO staff_employees (employee_id, display_name, search_text, raw, refreshed_at) VALUES (7, 'Zoë Müller', 'zoe muller', '{}', 'now')").run();
    core.close();
    const r = runCli(config, ['staff', 'purge', '--yes']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Deleted 1 cached staff rows\. No employee interface is configured, so nothing fetches them again\./);
    const db = new Database(storeFilePath(dataDir, 'staff'), { readonly: true, fileMustExist: true });
    try {
      assert.equal((db.prepare('SELECT count(*) AS n FROM staff_employees').get() as { n: number }).n, 0);
    } finally {
      db.close();
    }
    const bytes = fs.readFileSync(storeFilePath(dataDir, 'staff')).toString('utf8');
    assert.doesNotMatch(bytes, /Müller/, 'the name is gone from the file too');
  });
});
