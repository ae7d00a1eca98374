import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import Router from 'router';
import type { z } from 'zod';
import type { Agent, AgentService } from '../agent';
import { AppError } from '../errors';
import { bodyOf, jsonBody, rawBody } from '../http/body';
import { errorMiddleware, sendJson } from '../http/errors';
import { requestListener } from '../http/listener';
import type { Logger } from '../log';
import { pauseState } from '../store/operations-state';
import { controlAccessRoutes } from './control-access';
import { writeFileExclusive } from '../files/exclusive-write';
import { controlSecretRoutes } from './control-secrets';
import { ACTOR_HEADER, AckWarningsBody, CONTROL_SOCKET_FILE, ForceApplyBody, PausedBody, WebhookListenerReply, actorSchema, controlEndpoint, namesSocket, newControlPipe, newControlSocketDir } from './control-protocol';

/**
 * The agent's end of the control channel (control-protocol.ts): the CLI's data-changing commands
 * reach the running agent here and go through the same paths as the status window (the inbox on the
 * webhook's thread, then the one applier thread). It listens on a local socket only, so it needs no port and no token.
 */

function parseBody<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new AppError('invalid_parameter', 400, `${issue?.path.map(String).join('.') || '(body)'}: ${issue?.message ?? 'invalid'}`);
}

function actorOf(req: http.IncomingMessage): string {
  const raw = req.headers[ACTOR_HEADER];
  const parsed = actorSchema.safeParse(typeof raw === 'string' ? raw : undefined);
  return `${parsed.success ? parsed.data : 'operator'} (command line)`;
}

/**
 * The control channel's routes, on `router` (express's own router) without express, which the agent's
 * main thread need not load. Its bodies are JSON whatever their Content-Type (at most 16 KiB), or an
 * import's file (http/body.ts). Returns the request listener.
 */
export function createControlApp(agent: Agent, log: Logger): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const app = Router();
  const json = jsonBody({ limit: 16 * 1024, anyType: true });

  app.get('/ping', (_req, res) => {
    sendJson(res, 200, { pid: process.pid, dataDir: agent.config.dataDir });
  });

  app.get('/webhook-listener', (_req, res) => {
    const reply: z.infer<typeof WebhookListenerReply> = { pid: process.pid, url: agent.webhook?.url ?? null };
    sendJson(res, 200, reply);
  });

  app.get('/progress', (_req, res) => {
    sendJson(res, 200, { applying: agent.applyProgress });
  });

  app.post('/import', rawBody({ limit: agent.config.webhook.maxBodyBytes }), async (req, res) => {
    const body = bodyOf(req);
    const raw: Buffer = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
    if (raw.length === 0) throw new AppError('empty_payload', 400, 'the file is empty');
    const actor = actorOf(req);
    const { outcome, applied } = await agent.importPayload(raw, actor);
    log.info(`command line: payload imported by ${actor} (${raw.length} bytes): ${outcome.kind === 'stored' ? outcome.decision : `rejected ${outcome.errorId}`}`);
    sendJson(res, 200, { outcome, applied });
  });

  app.post('/force-apply', json, async (req, res) => {
    const body = parseBody(ForceApplyBody, bodyOf(req));
    const actor = actorOf(req);
    const result = await agent.forceApply(body.inboxId, actor, body.reason);
    log.warn(`command line: update #${body.inboxId} force-applied by ${actor}`);
    sendJson(res, 200, result);
  });

  // After a change the command line made to agent.db itself (resolve-conflict): apply what now can be.
  app.post('/drain', async (_req, res) => {
    sendJson(res, 200, { applied: await agent.drainNow() });
  });

  app.post('/ack-warnings', json, (req, res) => {
    const body = parseBody(AckWarningsBody, bodyOf(req));
    sendJson(res, 200, { acknowledged: agent.acknowledgeWarnings(actorOf(req), body.locationId) });
  });

  app.put('/paused', json, (req, res) => {
    const body = parseBody(PausedBody, bodyOf(req));
    const changed = agent.isPaused !== body.paused;
    agent.setPaused(body.paused, actorOf(req), body.reason?.trim() || null);
    const state = pauseState(agent.core.agentDb);
    sendJson(res, 200, { paused: state.paused, changed, changedAt: state.changedAt, changedBy: state.changedBy });
  });

  // The status window's access (severity, login links): control-access.ts.
  app.use(controlAccessRoutes(agent, log));
  // The webhook token, for `secrets show` where the desktop app keeps it: control-secrets.ts.
  app.use(controlSecretRoutes(agent, log, actorOf));

  const noSuchRoute = (): AppError => new AppError('not_found', 404, 'no such control route');
  app.use((_req, _res, next) => next(noSuchRoute()));
  const fail = errorMiddleware(log);
  app.use(fail);
  return requestListener(app, fail, (req, res) => fail(noSuchRoute(), req, res, () => res.destroy()));
}

/**
 * The socket folder an earlier start named in `file` (a deep data folder), if it is this account's
 * and was made as newControlSocketDir makes one: a crash left it. Anything else is left alone.
 */
function removeNamedSocketDir(file: string): void {
  try {
    const dir = path.dirname(fs.readFileSync(file, 'utf8').trim());
    const st = fs.lstatSync(dir);
    if (st.isDirectory() && st.uid === process.getuid?.() && /^pos-sync-agent-[A-Za-z0-9]{6}$/.test(path.basename(dir)) && path.dirname(dir) === os.tmpdir()) {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } catch {
    // No file, or nothing there: nothing to remove.
  }
  fs.rmSync(file, { force: true });
}

export class ControlService implements AgentService {
  readonly name = 'control';
  private server: http.Server | null = null;
  private endpoint: string | null = null;
  /** Windows: this start's pipe; a deep data folder: this start's socket. What the endpoint file names. */
  private pipe: string | null = null;
  /** A deep data folder: the folder of this start's socket (newControlSocketDir). */
  private socketDir: string | null = null;

  constructor(private readonly log: Logger) {}

  async start(agent: Agent): Promise<void> {
    const endpoint = controlEndpoint(agent.config.dataDir);
    // Windows: this start's own pipe, named in the data folder once it listens (control-protocol.ts).
    const pipe = process.platform === 'win32' ? newControlPipe(agent.config.dataDir) : null;
    // A data folder too deep for a socket path: this start's socket in a folder of a random name,
    // named in the data folder once it listens, as the pipe is.
    let socket: string | null = null;
    if (namesSocket(endpoint)) {
      // What a crash left: this process holds the data folder's lock, so no agent uses it.
      removeNamedSocketDir(endpoint);
      this.socketDir = newControlSocketDir();
      socket = path.join(this.socketDir, CONTROL_SOCKET_FILE);
    } else if (process.platform !== 'win32') {
      // A socket left by a crash: this process holds the data folder's lock, so no agent uses it.
      fs.rmSync(endpoint, { force: true });
      socket = endpoint;
    }
    const server = http.createServer(createControlApp(agent, this.log));
    // An import of a large file may take a while to apply; the CLI waits for it.
    server.requestTimeout = 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(pipe ?? socket ?? endpoint, () => {
        server.off('error', reject);
        resolve();
      });
    });
    if (pipe) {
      // Whole or not at all: a client never reads half a name.
      writeFileExclusive(endpoint, `${pipe}\n`);
    } else {
      // The umask makes the socket owner-only; say so explicitly where the platform allows.
      fs.chmodSync(socket!, 0o600);
      if (socket !== endpoint) writeFileExclusive(endpoint, `${socket}\n`);
    }
    this.server = server;
    this.endpoint = endpoint;
    this.pipe = pipe ?? (socket !== endpoint ? socket : null);
    // The pipe's name stays out of the log: the file is what lets a client find it.
    this.log.info(
      pipe
        ? `control channel for the command line on a named pipe, named in ${endpoint}`
        : socket !== endpoint
          ? `control channel for the command line at ${socket}, named in ${endpoint} (the data folder's path is too long for a socket's)`
          : `control channel for the command line at ${endpoint}`,
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.endpoint && this.pipe) {
      // Only a file that still names this start's pipe (or socket).
      try {
        if (fs.readFileSync(this.endpoint, 'utf8').trim() === this.pipe) fs.rmSync(this.endpoint, { force: true });
      } catch {
        // Gone already.
      }
    } else if (this.endpoint) {
      fs.rmSync(this.endpoint, { force: true });
    }
    if (this.socketDir) fs.rmSync(this.socketDir, { recursive: true, force: true });
    this.endpoint = null;
    this.pipe = null;
    this.socketDir = null;
  }
}
