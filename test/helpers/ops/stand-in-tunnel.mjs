// A stand-in for cloudflared/ngrok in tests: a loopback TCP proxy from --listen PORT to --target PORT
// that can be told, through a control file, to keep working ("ok"), to die ("die": exit code 3) or
// to hang ("hang": accept connections and never answer, as a tunnel with a dead upstream does).
// It prints log lines like a real tunnel, including one naming the token variable it received, so
// tests can check that the supervisor redacts the token from what it keeps and logs.
// Test options: --report-env FILE writes the names of the environment variables it got; --ignore-term
// makes it ignore SIGTERM (a hung tunnel); --grandchild FILE starts a child of its own and writes its pid.
// Usage: node stand-in-tunnel.mjs --listen PORT --target PORT --control FILE [--token-env NAME]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    listen: { type: 'string' },
    target: { type: 'string' },
    control: { type: 'string' },
    'token-env': { type: 'string' },
    'report-env': { type: 'string' },
    'ignore-term': { type: 'boolean' },
    grandchild: { type: 'string' },
  },
});
const listenPort = Number(values.listen);
const targetPort = Number(values.target);
const controlFile = values.control;
const tokenEnv = values['token-env'] ?? 'TUNNEL_TOKEN';

function mode() {
  try {
    return fs.readFileSync(controlFile, 'utf8').trim() || 'ok';
  } catch {
    return 'ok';
  }
}

const log = (line) => process.stdout.write(`${new Date().toISOString()} INF ${line}\n`);
log(`Starting stand-in tunnel pid=${process.pid} listen=${listenPort} target=${targetPort}`);
const token = process.env[tokenEnv];
// Deliberately careless, like some real programs: prints its credential. The supervisor must redact it.
if (token) log(`Using ${tokenEnv}=${token}`);

// Before anything the test waits for (the grandchild's pid file): a hung tunnel ignores SIGTERM from
// its first moment, so a restart cannot catch it before its handler exists.
if (values['ignore-term']) process.on('SIGTERM', () => log('Received SIGTERM, ignoring it'));
if (values['report-env']) fs.writeFileSync(values['report-env'], JSON.stringify(Object.keys(process.env).sort()));
if (values.grandchild) {
  const helper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  fs.writeFileSync(values.grandchild, String(helper.pid));
}

const sockets = new Set();
const server = net.createServer((client) => {
  sockets.add(client);
  client.on('close', () => sockets.delete(client));
  client.on('error', () => {});
  if (mode() === 'hang') return; // accept and never answer
  const upstream = net.connect(targetPort, '127.0.0.1');
  upstream.on('error', () => client.destroy());
  client.pipe(upstream).pipe(client);
});
server.on('error', (err) => {
  process.stderr.write(`ERR cannot listen on ${listenPort}: ${err.code}\n`);
  process.exit(2);
});
server.listen(listenPort, '127.0.0.1', () => log(`Registered tunnel connection on 127.0.0.1:${listenPort}`));

let lastMode = mode();
setInterval(() => {
  const now = mode();
  // Going dead also kills what is already connected (a real tunnel's pooled connections die with it).
  if (now === 'hang' && lastMode !== 'hang') for (const s of sockets) s.destroy();
  lastMode = now;
  if (now === 'die') {
    process.stderr.write('ERR connection to edge lost; giving up\n');
    process.exit(3);
  }
}, 50);
process.on('SIGTERM', () => {
  if (values['ignore-term']) return;
  log('Received SIGTERM, shutting down');
  for (const s of sockets) s.destroy();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 500).unref();
});
