import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/**
 * The control channel: how a CLI command that changes data (`import`, `force-apply`, `ack-warnings`,
 * `pause`, `resume`) hands its work to the agent running on the same data folder, so the applier
 * thread stays the one writer of the till's file. One schema per route's body and reply, shared by the
 * server (control.ts) and the client (cli/control-client.ts).
 *
 * The endpoint is a local socket, never a TCP port: a Unix domain socket `agent.sock` in the data
 * folder (owner-only, like the folder), or on Windows a named pipe (its default security lets only
 * the owner, SYSTEM and Administrators write to it). Who may connect is decided by the operating
 * system, so the channel needs no token of its own.
 *
 * A pipe's name is global on Windows: whichever process creates it first owns it. A name another
 * account could work out (one derived from the data folder, as 0.3's first builds used) let that
 * account create the pipe before the service did, and then answer the command line and the tray in
 * the agent's place, or stop the agent's start. So each start picks a new random name and writes it
 * to CONTROL_PIPE_FILE in the data folder, which only the accounts allowed on the channel can read;
 * a client reads the name there just before it connects.
 */

export const CONTROL_SOCKET_FILE = 'agent.sock';

/** Linux allows 108 bytes in a socket path and macOS 104; leave room for the terminator. */
const MAX_SOCKET_PATH_BYTES = 100;

function folderKey(dataDir: string): string {
  return crypto.createHash('sha256').update(path.resolve(dataDir).toLowerCase()).digest('hex').slice(0, 16);
}

/**
 * Where a client finds the agent for `dataDir`: the socket in the data folder, or (Windows) the file
 * naming this start's pipe. A data folder too deep for a socket path gets, like Windows, a file in the
 * data folder (CONTROL_SOCKET_POINTER_FILE) naming a socket in a folder of a random name the agent
 * made under the system temp folder at its start: a name another account can work out ahead (0.3's
 * first builds used `pos-sync-agent-<uid>`) let that account make the folder first and keep the agent
 * from starting.
 */
export function controlEndpoint(dataDir: string, platform: NodeJS.Platform = process.platform): string {
  // Windows: the file naming this start's pipe (controlTarget reads it).
  if (platform === 'win32') return path.win32.join(dataDir, CONTROL_PIPE_FILE);
  const inFolder = path.join(path.resolve(dataDir), CONTROL_SOCKET_FILE);
  if (Buffer.byteLength(inFolder) <= MAX_SOCKET_PATH_BYTES) return inFolder;
  return path.join(path.resolve(dataDir), CONTROL_SOCKET_POINTER_FILE);
}

/** Unix, a data folder too deep for a socket path: the file in it naming this start's socket. */
export const CONTROL_SOCKET_POINTER_FILE = 'control-socket';

/** Whether `endpoint` (controlEndpoint) is a file naming the socket rather than the socket. */
export function namesSocket(endpoint: string, platform: NodeJS.Platform = process.platform): boolean {
  return platform !== 'win32' && path.basename(endpoint) === CONTROL_SOCKET_POINTER_FILE;
}

/** A new folder for this start's socket, of a random name, owner-only (mkdtemp makes it 0700). */
export function newControlSocketDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-agent-'));
}

/** Windows: the file in the data folder naming the running agent's control pipe. */
export const CONTROL_PIPE_FILE = 'control-pipe';

const CONTROL_PIPE_NAME = /^\\\\\.\\pipe\\pos-sync-agent-[0-9a-f]{16}-[0-9a-f]{32}$/;

/** Windows: a pipe name for this start that no other account can guess (see the module comment). */
export function newControlPipe(dataDir: string): string {
  return `\\\\.\\pipe\\pos-sync-agent-${folderKey(dataDir)}-${crypto.randomBytes(16).toString('hex')}`;
}

/**
 * Where a client connects for `endpoint` (controlEndpoint): the socket itself, or on Windows the pipe
 * the file names. Reading the file fails as connecting would: ENOENT when no agent has started on the
 * folder, EACCES or EPERM for an account the folder does not let in. A file that names no control
 * pipe is treated as no agent.
 */
export function controlTarget(endpoint: string, platform: NodeJS.Platform = process.platform): string {
  if (namesSocket(endpoint, platform)) return namedSocket(endpoint);
  if (platform !== 'win32') return endpoint;
  const name = fs.readFileSync(endpoint, 'utf8').trim();
  if (!CONTROL_PIPE_NAME.test(name)) throw Object.assign(new Error(`${endpoint} names no control pipe`), { code: 'ENOENT' });
  return name;
}

/**
 * The socket a CONTROL_SOCKET_POINTER_FILE names, once its folder is checked: owner-only and owned by
 * the account that wrote the file (the agent's), so no other account's socket is taken for the
 * agent's. A file that names no socket, or a folder that is not so, is treated as no agent.
 */
function namedSocket(file: string): string {
  const owner = fs.statSync(file).uid;
  const socket = fs.readFileSync(file, 'utf8').trim();
  const noAgent = (why: string): Error => Object.assign(new Error(`${file} ${why}`), { code: 'ENOENT' });
  if (!path.isAbsolute(socket) || path.basename(socket) !== CONTROL_SOCKET_FILE) throw noAgent('names no control socket');
  let dir: fs.Stats;
  try {
    dir = fs.lstatSync(path.dirname(socket));
  } catch {
    throw noAgent('names a socket whose folder is gone');
  }
  if (!dir.isDirectory() || dir.uid !== owner || (dir.mode & 0o077) !== 0) throw noAgent(`names a socket in ${path.dirname(socket)}, which is not a private folder of the agent's account`);
  return socket;
}

/** Who asks: the CLI's operator name (user@host), for the audit log. */
export const ACTOR_HEADER = 'x-pos-sync-actor';
export const actorSchema = z.string().min(1).max(200);

export const ForceApplyBody = z.strictObject({ inboxId: z.number().int().positive(), reason: z.string().trim().min(3).max(500) });
export const AckWarningsBody = z.strictObject({ locationId: z.number().int().nullable() });
export const PausedBody = z.strictObject({ paused: z.boolean(), reason: z.string().max(500).optional() });

const AppliedUpdateSchema = z.object({
  inboxId: z.number().int(),
  locationId: z.number().int(),
  changeSequence: z.number().int(),
  baseline: z.boolean(),
  forced: z.boolean(),
  warnings: z.number().int(),
  rowsWritten: z.number().int(),
  applyMs: z.number(),
});

const EnvelopeHeaderSchema = z.looseObject({ LocationID: z.number().int(), ChangeSequence: z.number().int(), ParentChangeSequence: z.number().int() });

export const ImportReply = z.object({
  outcome: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('stored'),
      decision: z.enum(['new', 'duplicate', 'conflict']),
      inboxId: z.number().int(),
      deliveryId: z.number().int(),
      envelope: EnvelopeHeaderSchema,
    }),
    z.object({
      kind: z.literal('rejected'),
      quarantineId: z.number().int(),
      deliveryId: z.number().int(),
      errorId: z.string(),
      error: z.object({ field: z.string(), message: z.string() }),
    }),
  ]),
  applied: z.array(AppliedUpdateSchema),
});

export const ForceApplyReply = z.object({ forced: AppliedUpdateSchema, then: z.array(AppliedUpdateSchema) });
export const DrainReply = z.object({ applied: z.array(AppliedUpdateSchema) });
export const AckWarningsReply = z.object({ acknowledged: z.number().int().nonnegative() });
export const PausedReply = z.object({ paused: z.boolean(), changed: z.boolean(), changedAt: z.string().nullable(), changedBy: z.string().nullable() });
export const PingReply = z.object({ pid: z.number().int(), dataDir: z.string() });

/**
 * GET /webhook-listener: where the agent's webhook receiver listens (its URL, path included; null while
 * it does not), with the agent's pid. `dev publisher` asks it before it sends the webhook token it read
 * from this data folder, which goes to this agent's own listener only (cli/commands/dev-publisher.ts).
 */
export const WebhookListenerReply = z.object({ pid: z.number().int(), url: z.string().nullable() });

/** GET /progress: the apply under way (an import prints it as a progress line on a terminal). */
export const ProgressReply = z.object({
  applying: z.object({ locationId: z.number(), changeSequence: z.number(), inboxId: z.number(), done: z.number(), total: z.number() }).nullable(),
});

/** Error replies, as every HTTP boundary of the agent writes them (http/errors.ts). */
export const ErrorReply = z.object({ error: z.looseObject({ id: z.string(), message: z.string() }) });

// ---- the status window's access, for whoever may open this channel (control-access.ts) ----
//
// The desktop app in client mode (electron/service-client.ts) and `admin-url` ask the running agent
// for its state and for a one-time login link here, rather than reading its private files: the
// operating system's check on the socket or pipe is the whole access rule (docs/operations.md).

/** Who asks, for the audit log's actor ("maria@till-pc (desktop app)"). */
export const ControlVia = z.enum(['command line', 'desktop app']);

/** GET /summary: the one severity model (domain/severity.ts) as the tray shows it. */
export const SummaryReply = z.object({
  generatedAt: z.string(),
  light: z.enum(['green', 'amber', 'red']),
  label: z.string(),
  headline: z.string(),
  reasons: z.array(z.object({ id: z.string(), light: z.enum(['green', 'amber', 'red']), text: z.string() })),
  paused: z.boolean(),
  pausedBy: z.string().nullable(),
  pausedAt: z.string().nullable(),
  /** The status window's address (no credential), or null when admin.enabled is false. */
  adminUrl: z.string().nullable(),
});

export const LoginLinkBody = z.strictObject({ via: ControlVia, rotate: z.boolean().default(false) });
export const LoginLinkReply = z.object({ url: z.string(), expiresAt: z.string(), rotated: z.boolean() });
