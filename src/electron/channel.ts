import { z } from 'zod';
import { SECRET_NAMES } from '../config/secret-names';

/**
 * The message channel between the desktop shell's main process and the agent process it supervises
 * (src/electron/agent-process.ts). One schema per direction; every message is parsed on arrival, so a
 * message of the wrong shape is logged and dropped instead of half-understood. No `electron` or
 * storage import: both processes and the unit tests load this file.
 *
 * Secrets cross this channel because only the main process can use Electron's safeStorage: main
 * decrypts them and hands them to the agent at start; a secret set in the status window travels the
 * other way to be encrypted and stored. Never log a message of this channel as a whole.
 */

const secretName = z.enum(SECRET_NAMES);
const errorShape = z.strictObject({ id: z.string().min(1).max(100), message: z.string().max(2_000) });
const secretSource = z.enum(['environment', 'store']).nullable();

/** Where each secret currently comes from (never the value), for the window's settings. */
export const SecretSourcesSchema = z.partialRecord(secretName, secretSource);
export type SecretSources = z.infer<typeof SecretSourcesSchema>;

/** Agent process -> main. */
export const ChildMessageSchema = z.discriminatedUnion('type', [
  /** The agent listens: the window opens `adminLoginUrl` (it carries the token) and allows only `adminOrigin`. */
  z.strictObject({ type: z.literal('ready'), adminLoginUrl: z.url({ protocol: /^http$/ }), adminOrigin: z.url({ protocol: /^http$/ }) }),
  /** What the tray shows; sent after ready and whenever it changes. */
  z.strictObject({
    type: z.literal('status'),
    colour: z.enum(['green', 'amber', 'red', 'grey']),
    summary: z.string().max(500),
    paused: z.boolean(),
    startAtLogin: z.boolean(),
  }),
  /** The agent cannot run (it exits after sending this); `id` is the stable error id (errors.ts). */
  z.strictObject({ type: z.literal('fatal'), ...errorShape.shape }),
  /** The status window asked to store (value) or remove (value null) a secret; main answers with secret-result. */
  z.strictObject({ type: z.literal('secret-set'), requestId: z.number().int().nonnegative(), name: secretName, value: z.string().min(1).max(10_000).nullable() }),
  /** Start a fresh agent process with the current configuration and secrets (after a secret changed). */
  z.strictObject({ type: z.literal('restart-request') }),
  /** The answer to login-link-request: a fresh one-time login link for the window. */
  z.strictObject({ type: z.literal('login-link'), url: z.url({ protocol: /^http$/ }) }),
]);
export type ChildMessage = z.infer<typeof ChildMessageSchema>;

/** Main -> agent process. */
export const ParentMessageSchema = z.discriminatedUnion('type', [
  /** The first message: which configuration to load and the secrets main resolved for it. */
  z.strictObject({
    type: z.literal('start'),
    configFile: z.string().min(1).nullable(),
    secrets: z.partialRecord(secretName, z.string().min(1)),
    sources: SecretSourcesSchema,
  }),
  /** Stop the agent cleanly and exit. */
  z.strictObject({ type: z.literal('stop') }),
  /** The tray's Pause / Resume applying updates. */
  z.strictObject({ type: z.literal('pause'), paused: z.boolean() }),
  /** The tray's Start at login checkbox (the agent owns the settings file). */
  z.strictObject({ type: z.literal('start-at-login'), enabled: z.boolean() }),
  /**
   * A fresh login link for the window. Links are one-time and expire after admin.loginLinkMinutes, so
   * the one in `ready` cannot be kept for a window opened later or reloaded after a restart.
   */
  z.strictObject({ type: z.literal('login-link-request') }),
  /** The answer to secret-set. */
  z.strictObject({ type: z.literal('secret-result'), requestId: z.number().int().nonnegative(), sources: SecretSourcesSchema, error: errorShape.nullable() }),
]);
export type ParentMessage = z.infer<typeof ParentMessageSchema>;

export type Parsed<T> = { ok: true; message: T } | { ok: false; reason: string };

function parseWith<T>(schema: z.ZodType<T>, data: unknown): Parsed<T> {
  const result = schema.safeParse(data);
  if (result.success) return { ok: true, message: result.data };
  const issue = result.error.issues[0];
  // The reason names the field, never its value: a bad secret-set must not put the secret in a log.
  return { ok: false, reason: `${issue?.path.join('.') || '(message)'}: ${issue?.code ?? 'invalid'}` };
}

export function parseChildMessage(data: unknown): Parsed<ChildMessage> {
  return parseWith(ChildMessageSchema, data);
}

export function parseParentMessage(data: unknown): Parsed<ParentMessage> {
  return parseWith(ParentMessageSchema, data);
}
