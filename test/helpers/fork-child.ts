import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ChildHandle } from '../../src/electron/supervisor';

/**
 * The file the desktop app runs as its agent process: the bundle `npm run build` writes (main.ts forks
 * it, agentProcessEntry in src/electron/policy.ts). `npm test` builds first.
 */
export const AGENT_PROCESS_ENTRY = path.resolve(__dirname, '..', '..', 'dist', 'agent', 'agent-process.js');

/**
 * The desktop agent process started the way the tests can (no Electron here): Node's child_process.fork
 * of the same entry file, with the IPC channel standing in for Electron's parentPort.
 */
export function forkAgentProcess(output: { text: string }, children: ChildProcess[] = []): ChildHandle {
  if (!fs.existsSync(AGENT_PROCESS_ENTRY)) throw new Error(`${AGENT_PROCESS_ENTRY} is missing: npm run build`);
  const child = fork(AGENT_PROCESS_ENTRY, [], {
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, NODE_ENV: 'test' },
  });
  children.push(child);
  child.stdout!.on('data', (c: Buffer) => (output.text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output.text += c.toString()));
  // A send racing the child's exit must not crash the test process.
  child.on('error', (err) => (output.text += `[fork error] ${err.message}\n`));
  return {
    get pid() {
      return child.pid;
    },
    send: (message) => {
      if (child.connected) child.send(message);
    },
    kill: () => void child.kill('SIGKILL'),
    onMessage: (listener) => child.on('message', listener),
    onExit: (listener) => child.on('exit', (code) => listener(code)),
  };
}
