import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

/**
 * electron-builder cannot run here (no Electron download), so the configuration is checked offline:
 * it parses, passes electron-builder's own schema validation, and says what the issue asks for.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const yaml = require('js-yaml') as { load(text: string): unknown };
const builderConfig = require('app-builder-lib/out/util/config/config') as { validateConfiguration(config: unknown, logger: unknown): Promise<void> };

type Config = Record<string, unknown> & {
  files: string[];
  asarUnpack: string[];
  electronFuses: Record<string, boolean>;
  nsis: Record<string, unknown>;
  win: { target: { target: string }[]; icon: string };
  linux: { target: { target: string }[]; icon: string; artifactName: string };
  npmRebuild: boolean;
};

const config = yaml.load(fs.readFileSync(path.join(ROOT, 'electron-builder.yml'), 'utf8')) as Config;
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { main: string; scripts: Record<string, string> };

describe('electron-builder.yml', () => {
  it("passes electron-builder's schema validation", async () => {
    const logger = { isEnabled: false, add() {} };
    await builderConfig.validateConfiguration(structuredClone(config), logger);
    await assert.rejects(builderConfig.validateConfiguration({ ...structuredClone(config), nsis: { oneClik: false } }, logger), 'the validator does reject a typo');
  });

  it('closes the NODE_OPTIONS and inspector back doors; run-as-node stays for the command', () => {
    const f = config.electronFuses;
    // On: the desktop app's pos-sync-agent command runs the CLI through it (test/integration/install/desktop-command.test.ts).
    assert.equal(f.runAsNode, true);
    assert.equal(f.enableNodeOptionsEnvironmentVariable, false);
    assert.equal(f.enableNodeCliInspectArguments, false);
    assert.equal(f.onlyLoadAppFromAsar, true);
    assert.equal(f.enableEmbeddedAsarIntegrityValidation, true);
    assert.equal(f.grantFileProtocolExtraPrivileges, false);
  });

  it('builds a per-machine NSIS installer with shortcuts and an explicit artifact name, and an AppImage', () => {
    assert.deepEqual(config.win.target.map((t) => t.target), ['nsis']);
    assert.equal(config.nsis.oneClick, false);
    assert.equal(config.nsis.perMachine, true);
    assert.equal(config.nsis.createDesktopShortcut, 'always');
    assert.equal(config.nsis.createStartMenuShortcut, true);
    assert.match(String(config.nsis.artifactName), /^pos-sync-agent-setup-\$\{version\}-\$\{arch\}\.\$\{ext\}$/);
    assert.deepEqual(config.linux.target.map((t) => t.target), ['AppImage']);
    assert.match(config.linux.artifactName, /\$\{version\}/);
  });

  it('unpacks better-sqlite3 from the archive and, a Node-API addon, never rebuilds it for Electron', () => {
    assert.ok(config.asarUnpack.some((p) => p.includes('better-sqlite3')));
    assert.equal(config.npmRebuild, false);
    assert.equal(pkg.scripts.postdist, undefined, 'nothing to undo after packaging');
    assert.ok(fs.existsSync(path.join(__dirname, '..', '..', '..', 'node_modules', 'better-sqlite3', 'prebuilds')), 'better-sqlite3 ships its own Node-API binaries');
    assert.match(pkg.scripts.dist ?? '', /build:renderer.*electron-builder --config electron-builder.yml/);
  });

  it('ships the compiled main entry, the built renderer and the icons it names', () => {
    assert.equal(pkg.main, 'dist/src/electron/main.js');
    assert.ok(config.files.includes('dist/src/**/*.js'));
    // The command and the service run bin/pos-sync-agent.cjs, which runs the bundle (scripts/bundle-agent.mjs).
    assert.ok(config.files.includes('bin/*.cjs'));
    assert.ok(config.files.includes('dist/agent/*.js'), 'the bundle the command runs is in app.asar');
    assert.ok(config.files.some((f) => f.startsWith('renderer/dist/')));
    for (const icon of [config.win.icon, config.linux.icon, String(config.nsis.installerIcon), 'assets/tray-green.png', 'assets/tray-amber.png', 'assets/tray-red.png', 'assets/tray-grey.png']) {
      assert.ok(fs.existsSync(path.join(ROOT, icon)), icon);
    }
    const ico = fs.readFileSync(path.join(ROOT, config.win.icon));
    assert.equal(ico.readUInt16LE(2), 1, 'an .ico file');
    const sizes = Array.from({ length: ico.readUInt16LE(4) }, (_, i) => ico[6 + i * 16] || 256);
    assert.ok(sizes.includes(256) && sizes.includes(16), `ico sizes ${sizes.join(',')}`);
  });
});
