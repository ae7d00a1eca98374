import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { checkBackupFile } from '../../ops/backup/candidate';
import { listBackups } from '../../ops/backup/files';
import { restoreDatabase } from '../../ops/backup/restore';
import { backupDatabase } from '../../ops/backup/write';
import { defaultDiagnosticsFile, writeDiagnostics } from '../../ops/diagnostics';
import { holdDataFolder } from '../../ops/instance';
import { backupDir } from '../../ops/paths';
import { describeSite } from '../../config/site';
import { cliCommand } from '../../config/invocation';
import { dataDirFor, headlessSecretStore, loadConfigWithSecrets, rawConfigInput, secretsFileFor } from '../../ops/secrets';
import { ENV_PREFIX } from '../../config/load';
import { operatorName } from '../../core';
import { auditOnDataFolder } from '../../store/audit';
import { opsStatus } from '../../ops/status';
import { describeTunnel, readTunnelState } from '../../ops/tunnel';
import { runningAgent } from '../../ops/instance';
import { AppError } from '../../errors';
import { configureWriter, MIGRATIONS_FOR, refuseNewerDatabase, STORE_FILES, storeFilePath } from '../../store/database';
import { isLegacySingleFile } from '../../store/split';
import { EXIT, UsageError, type Command, type CommandContext } from '../command';
import { writeErr } from '../output';
import { timeWithZone } from '../../domain/local-time';
import { formatBytes } from '../../ops/panels';
import { assertSecretName, SECRET_NAMES, secretEnvName } from '../../config/secret-names';
import { SECRET_SHOWN_ACTION } from '../../admin/webhook-token-schema';
import { desktopKeepsWebhookToken, webhookTokenFromDesktop } from '../desktop-secret';
import { desktopEncryptionWords, desktopStoredNames, safeStorageSecretsFile } from '../../ops/desktop-secrets-file';

/** Operations commands (docs/operations.md): secrets, backup/restore, diagnostics, tunnel, compact. */

/** The site's configuration file and default data folder (config/site.ts), as every command finds them. */
function siteOptions(ctx: CommandContext): { file: string | null; defaultDataDir: string } {
  const { file, defaultDataDir } = ctx.site();
  return { file, defaultDataDir };
}

/** A secret's value as the configuration (file and POS_SYNC__ overrides) gives it, if it does. */
function configValue(raw: unknown, name: string): unknown {
  let node = raw;
  for (const key of name.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node === null || node === '' ? undefined : node;
}

/** The configuration with secrets resolved (and registered with the redactor). */
function opsConfig(ctx: CommandContext) {
  return loadConfigWithSecrets(siteOptions(ctx)).config;
}

/**
 * Reads a secret from stdin: typed without echo on a terminal, or piped (`... | pos-sync-agent secrets
 * set NAME`), one trailing newline removed. Never from argv, where other users can see it (ps).
 */
export async function readSecretFromStdin(prompt: string, input: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (input.isTTY) {
    process.stderr.write(prompt);
    return new Promise((resolve, reject) => {
      let value = '';
      input.setRawMode(true);
      input.setEncoding('utf8');
      input.resume();
      const done = (err: Error | null): void => {
        input.setRawMode(false);
        input.pause();
        input.removeListener('data', onData);
        process.stderr.write('\n');
        if (err) reject(err);
        else resolve(value);
      };
      const onData = (chunk: string): void => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n') return done(null);
          if (ch === '\u0003') return done(new UsageError('cancelled'));
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
          else value += ch;
        }
      };
      input.on('data', onData);
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * Which data folder a secrets command works on, said before anything else, as every command that reads
 * or changes a site's data does (cli/site-check.ts): with the configuration it came from, --config
 * included. Without --config it is the default folder, and a site whose agent runs with
 * `--config site.json` (another dataDir) would never see the secret: that is said too. On stderr, so
 * `secrets show` prints the token alone and `secrets list --json` stays parseable.
 */
function announceSecretsFolder(ctx: CommandContext): string {
  const file = secretsFileFor(siteOptions(ctx));
  const dataDir = dataDirFor(siteOptions(ctx));
  const agent = runningAgent(dataDir);
  const running = agent ? ` (the agent running with pid ${agent.pid} uses it too)` : ' (no agent is running from it)';
  if (ctx.site().file === null) {
    writeErr(
      `No --config given: using the default data folder ${dataDir}${running}. ` +
        'If the site runs with --config FILE, run this again with that --config.\n',
    );
  } else {
    writeErr(`Data folder: ${dataDir}${running} (configuration: ${describeSite(ctx.site())}).\n`);
  }
  return file;
}

export const secretsSet: Command = {
  name: 'secrets set',
  summary: `store a secret (read from stdin, never the command line); NAME is one of: ${SECRET_NAMES.join(', ')}`,
  usage: 'NAME  (value on stdin)',
  positionals: [1, 1],
  async run(ctx) {
    const name = assertSecretName(ctx.args[0]!);
    const file = announceSecretsFolder(ctx);
    const store = headlessSecretStore(file);
    const value = await readSecretFromStdin(`Value for ${name}, to be stored in ${file} (not shown): `);
    if (value.length === 0) throw new UsageError('no value given on stdin');
    store.set(name, value);
    auditOnDataFolder(dataDirFor(siteOptions(ctx)), `${operatorName()} (command line)`, 'secret-set', { name });
    const overridden = store.sourceOf(name) === 'environment';
    ctx.out(`Stored ${name} in ${file}.${overridden ? ` Note: ${secretEnvName(name)} is set and takes precedence.` : ''}`);
    ctx.out('A running agent (or status window) uses it from its next start.');
    return EXIT.ok;
  },
};

export const secretsList: Command = {
  name: 'secrets list',
  summary: 'the names of the secrets that are set, and where each comes from (never the values)',
  usage: '',
  run(ctx) {
    const file = announceSecretsFolder(ctx);
    const store = headlessSecretStore(file);
    // A value can also come from the configuration itself: its file, or a POS_SYNC__ override.
    const { raw } = rawConfigInput(siteOptions(ctx));
    // And from the desktop app's encrypted file, whose names are readable without decrypting it.
    const desktopFile = safeStorageSecretsFile(dataDirFor(siteOptions(ctx)));
    const inDesktop = new Set(desktopStoredNames(desktopFile));
    const rows = SECRET_NAMES.map((name) => {
      const source = store.sourceOf(name);
      const configVariable = `${ENV_PREFIX}${name.split('.').join('__')}`;
      const inConfig = source === null && configValue(raw, name) !== undefined;
      const fromConfig = inConfig ? (process.env[configVariable] !== undefined ? 'configuration-environment' : 'configuration-file') : null;
      return {
        name,
        source: source ?? fromConfig ?? (inDesktop.has(name) ? 'desktop-app' : null),
        environmentVariable: source === null && inConfig && process.env[configVariable] !== undefined ? configVariable : secretEnvName(name),
      };
    });
    const where: Record<string, (r: (typeof rows)[number]) => string> = {
      environment: (r) => `set (${r.environmentVariable})`,
      store: () => 'set (secrets file)',
      'configuration-environment': (r) => `set (${r.environmentVariable}, a configuration override)`,
      'configuration-file': () => 'set (in the configuration file — better moved to the secrets file)',
      'desktop-app': () => `set (kept by the desktop app in ${desktopFile}, ${desktopEncryptionWords()})`,
    };
    if (ctx.json) ctx.printJson({ file, secrets: rows });
    else {
      ctx.out(`Secrets file: ${file}`);
      for (const r of rows) ctx.out(`  ${r.name.padEnd(26)} ${r.source === null ? 'not set' : where[r.source]!(r)}`);
    }
    return EXIT.ok;
  },
};

/** The secret `secrets show` and `secrets generate` take: the one this agent makes and head office must be given. */
const SHOWABLE = 'webhook.bearerToken';

function showableName(ctx: CommandContext): typeof SHOWABLE {
  const name = assertSecretName(ctx.args[0]!);
  if (name !== SHOWABLE) throw new UsageError(`only ${SHOWABLE} can be shown or generated here (the others come from their services: set them with ${cliCommand(`secrets set ${name}`)})`);
  return name;
}

export const secretsShow: Command = {
  name: 'secrets show',
  summary: `print ${SHOWABLE} (the webhook token head office must send, which the agent makes at first start; from the running desktop app when it keeps it)`,
  usage: SHOWABLE,
  positionals: [1, 1],
  async run(ctx) {
    const name = showableName(ctx);
    const file = announceSecretsFolder(ctx);
    const dataDir = dataDirFor(siteOptions(ctx));
    const actor = operatorName();
    let value = headlessSecretStore(file).get(name);
    if (value !== null) auditOnDataFolder(dataDir, `${actor} (command line)`, SECRET_SHOWN_ACTION, { name });
    // Kept encrypted by the desktop app: its running agent answers (and records it in the audit log).
    else if (desktopKeepsWebhookToken(dataDir)) value = (await webhookTokenFromDesktop(dataDir, actor)).value;
    if (value === null) {
      throw new AppError('secret_not_set', 404, `${name} is not set in ${file} (or POS_SYNC_SECRET_*): start the agent once to make it (${cliCommand('serve')}), or run: ${cliCommand(`secrets generate ${name}`)}`);
    }
    if (ctx.json) ctx.printJson({ name, value });
    else ctx.out(value);
    return EXIT.ok;
  },
};

export const secretsGenerate: Command = {
  name: 'secrets generate',
  summary: `make a new random ${SHOWABLE} and store it (head office must then be given it: secrets show)`,
  usage: SHOWABLE,
  positionals: [1, 1],
  run(ctx) {
    const name = showableName(ctx);
    const file = announceSecretsFolder(ctx);
    const store = headlessSecretStore(file);
    store.set(name, crypto.randomBytes(32).toString('base64url'));
    // The hint carries this site's --config: typed without it, `secrets show` would print another folder's token.
    ctx.out(`Stored a new ${name} in ${file}. Give it to head office for this site's registration (${cliCommand(`secrets show ${name}`)}); a running agent uses it from its next start.`);
    return EXIT.ok;
  },
};

export const secretsDelete: Command = {
  name: 'secrets delete',
  summary: 'remove a secret from the secrets file',
  usage: 'NAME',
  positionals: [1, 1],
  run(ctx) {
    const name = assertSecretName(ctx.args[0]!);
    const file = announceSecretsFolder(ctx);
    const removed = headlessSecretStore(file).delete(name);
    if (removed) auditOnDataFolder(dataDirFor(siteOptions(ctx)), `${operatorName()} (command line)`, 'secret-removed', { name });
    ctx.out(removed ? `Removed ${name} from ${file}.` : `${name} was not in ${file}.`);
    return EXIT.ok;
  },
};

export const backupCommand: Command = {
  name: 'backup',
  summary: 'write an online backup set (agent.db, pos-sync.db; staff.db with backup.includeStaff) now; safe while the agent runs; keeps backup.keep',
  usage: '',
  async run(ctx) {
    const config = opsConfig(ctx);
    const files = (['agent', 'till', 'staff'] as const).map((kind) => storeFilePath(config.dataDir, kind));
    if (!fs.existsSync(files[0]!) || !fs.existsSync(files[1]!)) throw new AppError('no_database', 404, `there are no data files in ${config.dataDir} yet (or they are 0.1's: start the agent once to upgrade them)`);
    // Read-only connections: the backup API only reads, and a running agent keeps writing meanwhile.
    const open = (file: string): Database.Database => {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 10000');
      return db;
    };
    const agent = open(files[0]!);
    const till = open(files[1]!);
    const staff = config.backup.includeStaff && fs.existsSync(files[2]!) ? open(files[2]!) : null;
    try {
      const made = await backupDatabase({ agent, till, staff }, backupDir(config), config.backup.keep);
      if (ctx.json) ctx.printJson(made);
      else ctx.out(`Backup written: ${made.file} (${formatBytes(made.bytes)}${staff ? ', staff cache included' : ''})`);
    } finally {
      for (const db of [agent, till, staff]) db?.close();
    }
    return EXIT.ok;
  },
};

export const backupList: Command = {
  name: 'backup list',
  summary: 'the backups kept, newest first, with the ChangeSequence each would resume from (--check)',
  usage: '[--check]',
  options: { check: { type: 'boolean' } },
  run(ctx) {
    const config = opsConfig(ctx);
    const backups = listBackups(backupDir(config)).map((b) => ({ ...b, check: ctx.values.check ? checkBackupFile(b.file) : undefined }));
    if (ctx.json) ctx.printJson({ dir: backupDir(config), backups });
    else if (backups.length === 0) ctx.out(`No backups in ${backupDir(config)}.`);
    else
      for (const b of backups) {
        const resumes = (locations: readonly { locationId: number; lastChangeSequence: number | null }[]): string =>
          locations.length === 0 ? 'ok (no update applied in it yet)' : `ok; resumes ${locations.map((l) => `location ${l.locationId} from ${l.lastChangeSequence ?? '(nothing applied)'}`).join(', ')}`;
        const check = b.check ? `  ${b.check.ok ? resumes(b.check.locations) : `REFUSED: ${b.check.problems.join('; ')}`}` : '';
        ctx.out(`${timeWithZone(b.takenAt)}  ${formatBytes(b.bytes).padStart(10)}  ${b.file}${check}`);
      }
    return EXIT.ok;
  },
};

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'replace the data files with a backup set (or a 0.1 backup file); agent stopped; checked first; the live files are kept aside',
  usage: 'BACKUP',
  positionals: [1, 1],
  async run(ctx) {
    const config = opsConfig(ctx);
    const result = await restoreDatabase(config, ctx.args[0]!, new Date(), ctx.logger(config));
    if (ctx.json) ctx.printJson(result);
    else {
      ctx.out(`Restored ${result.restoredFrom}.`);
      if (result.previousSavedAs) ctx.out(`The files it replaced are kept as ${result.previousSavedAs}.`);
      if (result.check.kind === 'set' && !result.check.includesStaff) ctx.out('The backup holds no staff cache: the current one was kept (the next staff sync refreshes it).');
      for (const l of result.check.locations) ctx.out(`Location ${l.locationId} resumes from ChangeSequence ${l.lastChangeSequence ?? '(none)'}.`);
      ctx.out(`Updates delivered after this backup are missing: later deliveries wait as gaps (see \`${cliCommand('status')}\`) until head office resends them.`);
    }
    return EXIT.ok;
  },
};

export const diagnoseCommand: Command = {
  name: 'diagnose',
  summary: 'write a zip for support: masked config, versions, logs, sync state, integrity check (no personal data)',
  usage: '[--out FILE]',
  options: { out: { type: 'string' } },
  async run(ctx) {
    const config = opsConfig(ctx);
    const out = typeof ctx.values.out === 'string' ? path.resolve(ctx.values.out) : defaultDiagnosticsFile(config);
    const result = await writeDiagnostics(config, out);
    if (ctx.json) ctx.printJson(result);
    else ctx.out(`Diagnostics written: ${result.file} (${formatBytes(result.bytes)}, ${result.entries.length} files), of the data folder ${config.dataDir} (configuration: ${describeSite(ctx.site())})`);
    return EXIT.ok;
  },
};

export const tunnelStatus: Command = {
  name: 'tunnel status',
  summary: 'the tunnel as the running agent last saw it: running, restarting (why), unreachable; last output',
  usage: '',
  run(ctx) {
    const config = opsConfig(ctx);
    // Exit 0 means "a configured tunnel is running": with none configured there is nothing running (exit 1).
    if (!config.tunnel) throw new AppError('tunnel_not_configured', 404, 'no tunnel is configured (configuration key "tunnel"); head office reaches the webhook directly');
    const state = readTunnelState(config.dataDir);
    const alive = runningAgent(config.dataDir) !== null;
    if (ctx.json) ctx.printJson({ agentRunning: alive, tunnel: state });
    else {
      ctx.out(describeTunnel(state, alive).join('\n'));
      if (state && state.output.length > 0) ctx.out(['Last output:', ...state.output.map((l) => `  ${l}`)].join('\n'));
    }
    return alive && state?.phase === 'running' ? EXIT.ok : EXIT.failed;
  },
};

export const opsStatusCommand: Command = {
  name: 'ops status',
  summary: 'agent, tunnel, disk space, last backup and clock/timezone warnings',
  usage: '',
  run(ctx) {
    const status = opsStatus(opsConfig(ctx));
    if (ctx.json) ctx.printJson(status.json);
    else ctx.out(status.lines.join('\n'));
    return EXIT.ok;
  },
};

export const compactCommand: Command = {
  name: 'compact',
  summary: 'VACUUM the three data files to give pruned space back to the disk (agent stopped; needs free space of the largest)',
  usage: '',
  run(ctx) {
    const config = opsConfig(ctx);
    // Held to the end: an agent starting meanwhile would write under the VACUUM.
    const lock = holdDataFolder(config.dataDir, 'compacting');
    const results: { file: string; before: number; after: number }[] = [];
    try {
      const kinds = (['till', 'agent', 'staff'] as const).filter((kind) => fs.existsSync(storeFilePath(config.dataDir, kind)));
      // Every file first: a folder a newer version wrote is refused before any of it is rewritten
      // (0.1's single file, which an upgrade splits, is this version's to read).
      for (const kind of kinds) {
        const db = new Database(storeFilePath(config.dataDir, kind), { fileMustExist: true, readonly: true });
        try {
          if (!(kind === 'till' && isLegacySingleFile(db))) refuseNewerDatabase(db, MIGRATIONS_FOR[kind], STORE_FILES[kind]);
        } finally {
          db.close();
        }
      }
      for (const kind of kinds) {
        const file = storeFilePath(config.dataDir, kind);
        const before = fs.statSync(file).size;
        const db = new Database(file, { fileMustExist: true });
        try {
          configureWriter(db);
          db.exec('VACUUM');
          db.pragma('wal_checkpoint(TRUNCATE)');
        } finally {
          db.close();
        }
        results.push({ file, before, after: fs.statSync(file).size });
      }
    } finally {
      lock.release();
    }
    if (ctx.json) ctx.printJson({ files: results, before: results.reduce((a, r) => a + r.before, 0), after: results.reduce((a, r) => a + r.after, 0) });
    else for (const r of results) ctx.out(`Compacted ${r.file}: ${formatBytes(r.before)} -> ${formatBytes(r.after)}.`);
    return EXIT.ok;
  },
};

export const OPS_COMMANDS: readonly Command[] = [
  secretsSet,
  secretsList,
  secretsShow,
  secretsGenerate,
  secretsDelete,
  backupCommand,
  backupList,
  restoreCommand,
  diagnoseCommand,
  tunnelStatus,
  opsStatusCommand,
  compactCommand,
];
