import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { resolveSiteConfig, type SiteConfig } from '../../../src/config/site';
import { clientTrayState, desktopMode, probeService } from '../../../src/electron/service-client';
import { freePort, startChildAgent, writeConfig, type ChildAgent } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';

const LINUX = { platform: 'linux' as const, home: '/home/manager', cwd: '/', env: {} };

describe('client mode: the decision (service-client.ts)', () => {
  it('is a client exactly when the site is the machine-wide configuration', () => {
    const machine = resolveSiteConfig({ ...LINUX, exists: (f) => f === '/etc/pos-sync-agent/config.json' });
    const mode = desktopMode(machine, { admin: { port: 9780 }, webhook: { port: 9787 } });
    assert.deepEqual(mode, {
      kind: 'client',
      service: { configFile: '/etc/pos-sync-agent/config.json', adminUrl: 'http://127.0.0.1:9780/', healthUrl: 'http://127.0.0.1:9787/healthz' },
    });
    // Defaults when the file sets no ports; a receiver on all interfaces is reached on loopback.
    assert.deepEqual(desktopMode(machine, { webhook: { host: '0.0.0.0' } }), {
      kind: 'client',
      service: { configFile: '/etc/pos-sync-agent/config.json', adminUrl: 'http://127.0.0.1:8780/', healthUrl: 'http://127.0.0.1:8787/healthz' },
    });
    for (const own of [
      resolveSiteConfig({ ...LINUX, exists: (f) => f.startsWith('/home/') }),
      resolveSiteConfig({ ...LINUX, exists: () => false }),
      resolveSiteConfig({ ...LINUX, option: '/srv/site.json', exists: () => true }),
    ]) {
      assert.deepEqual(desktopMode(own, { admin: { port: 1 } }), { kind: 'own' }, own.source);
    }
  });

  it('says in the tray that it is a client, and whether the service answers', () => {
    assert.match(clientTrayState('running').tooltip, /connected to the service agent/);
    assert.equal(clientTrayState('not-answering').colour, 'red');
    assert.match(clientTrayState('not-answering').tooltip, /does not answer/);
    assert.equal(clientTrayState(null).colour, 'grey');
  });
});

describe('client mode against a real serve', () => {
  let agent: ChildAgent | null = null;
  after(async () => agent?.kill('SIGTERM'));

  it('finds the running service agent through its configuration, and notices when it stops', async () => {
    const dir = tempDir();
    const adminPort = await freePort();
    const webhookPort = await freePort();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), admin: { port: adminPort }, webhook: { port: webhookPort } });
    // This file plays the machine-wide one (writing /etc here would touch the machine).
    const site: SiteConfig = { file: config, source: 'machine', machine: true, defaultDataDir: path.join(dir, 'data') };
    const mode = desktopMode(site, JSON.parse(fs.readFileSync(config, 'utf8')) as Record<string, unknown>);
    assert.equal(mode.kind, 'client');
    if (mode.kind !== 'client') return;
    assert.equal(await probeService(mode.service), 'not-answering', 'nothing runs yet');
    agent = await startChildAgent(config);
    assert.equal(await probeService(mode.service), 'running');
    // The address it opens is the service's status window: the page loads (it holds no data), and its
    // API asks for a login link from admin-url.
    const page = await fetch(mode.service.adminUrl);
    assert.equal(page.status, 200);
    const api = await fetch(new URL('/api/status', mode.service.adminUrl));
    assert.equal(api.status, 401);
    assert.match(await api.text(), /pos-sync-agent admin-url/);
    await agent.kill('SIGTERM');
    agent = null;
    assert.equal(await probeService(mode.service), 'not-answering');
  });
});
