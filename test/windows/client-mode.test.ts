import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/child-agent';
import { laneDir, post, sample } from './lane';
import { REPO_ROOT, runWindows, startAgent, winPath, writeWindowsConfig, type WindowsAgent } from './wine';

/**
 * Client mode on Windows (issue 25): the desktop app's client code (dist/src/electron/service-client.js)
 * run as a Windows process asks a Windows agent, over its named pipe, for its severity and a login
 * link. Wine does not enforce the pipe's default security, so who may connect is not tested here
 * (docs/operations.md, "Not run here"); the pipe's name, the routes and the link are.
 */

const TOKEN = 'windows-lane-token-0123456789';
const ORIGIN = 'menus.example.com';

describe('Windows: the desktop client asks the service over its named pipe', () => {
  const work = laneDir('client');
  const dataDir = path.join(work, 'data');
  const out = { outDir: path.join(work, 'out') };
  let config = '';
  let agent: WindowsAgent;

  before(async () => {
    config = writeWindowsConfig(path.join(work, 'config.json'), {
      dataDir: winPath(dataDir),
      webhook: { port: 0, bearerToken: TOKEN, expectedOrigin: ORIGIN },
      admin: { port: await freePort() },
      sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
      backup: { enabled: false },
    });
    agent = await startAgent(config, dataDir, out);
  });
  after(async () => {
    await agent?.stop();
  });

  it('gets the severity and a login link that works once', async () => {
    assert.equal((await post(agent.url, sample(1), { authorization: `Bearer ${TOKEN}`, origin: `https://${ORIGIN}` })).status, 200);
    const script = path.join(work, 'client.cjs');
    fs.writeFileSync(
      script,
      `const fs = require('node:fs');
const client = require(${JSON.stringify(winPath(path.join(REPO_ROOT, 'dist', 'src', 'electron', 'service-client.js')))});
const configFile = ${JSON.stringify(winPath(config))};
const raw = JSON.parse(fs.readFileSync(configFile, 'utf8').replace(/^\\uFEFF/, ''));
const mode = client.desktopMode({ file: configFile, source: 'machine', machine: true, defaultDataDir: raw.dataDir }, raw, raw.dataDir);
(async () => {
  let view = await client.askService(mode.service, { actor: 'maria@till-pc', timeoutMs: 30000 });
  for (let i = 0; i < 100 && !(view.kind === 'status' && view.summary.light === 'green'); i++) {
    await new Promise((r) => setTimeout(r, 300));
    view = await client.askService(mode.service, { actor: 'maria@till-pc', timeoutMs: 30000 });
  }
  // As the desktop app asks: the window's origin is the link's, drawn at the service's start.
  const link = await client.serviceLoginLink(mode.service, null, { actor: 'maria@till-pc', timeoutMs: 30000 });
  fs.writeFileSync(${JSON.stringify(winPath(path.join(work, 'client.json')))}, JSON.stringify({ control: mode.service.control, adminUrl: mode.service.adminUrl, view, link }));
})();
`,
    );
    const r = await runWindows([winPath(script)], out);
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
    const got = JSON.parse(fs.readFileSync(path.join(work, 'client.json'), 'utf8')) as {
      control: string;
      adminUrl: string;
      view: { kind: string; summary?: { light: string; headline: string } };
      link: { kind: string; url?: string };
    };
    // The file in the service's data folder naming this start's pipe, which the client read to connect.
    assert.equal(got.control, `${winPath(dataDir)}\\control-pipe`);
    assert.match(fs.readFileSync(path.join(dataDir, 'control-pipe'), 'utf8'), /^\\\\\.\\pipe\\pos-sync-agent-[0-9a-f]{16}-[0-9a-f]{32}\n$/);
    assert.equal(got.view.kind, 'status', JSON.stringify(got.view));
    assert.equal(got.view.summary?.light, 'green', got.view.summary?.headline);
    assert.equal(got.link.kind, 'link', JSON.stringify(got.link));
    const url = new URL(got.link.url!);
    // At an address of its own (127.x.y.z), at the configured port: the configured address is the front door.
    assert.match(url.hostname, /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/);
    assert.notEqual(`${url.origin}/`, got.adminUrl);
    assert.equal(url.port, new URL(got.adminUrl).port);
    const login = (): Promise<Response> =>
      fetch(new URL('/api/login', url.origin), { method: 'POST', headers: { 'content-type': 'application/json', origin: url.origin }, body: JSON.stringify({ code: url.searchParams.get('login') }) });
    assert.equal((await login()).status, 200);
    assert.equal((await login()).status, 401, 'once');
  });
});
