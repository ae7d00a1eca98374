// Starts the agent the way `pos-sync-agent serve` does once it loads its configuration through
// loadConfigWithSecrets (src/ops/secrets.ts): used by the tests that check a secret never reaches the
// log file or any process's command line. Usage: node --import tsx serve-with-secrets.ts CONFIG_FILE
import { Agent } from '../../../src/agent';
import { agentServices } from '../../../src/cli/services';
import { maskConfig } from '../../../src/config/load';
import { configureLogging } from '../../../src/log';
import { logDir } from '../../../src/ops/paths';
import { loadConfigWithSecrets } from '../../../src/ops/secrets';

async function main(): Promise<void> {
  const { config, resolved, store } = loadConfigWithSecrets({ file: process.argv[2]! });
  const log = configureLogging({ dir: logDir(config), level: 'debug', maxFileBytes: config.log.maxFileBytes, console: false });
  log.info(`configuration: ${JSON.stringify(maskConfig(config))}`);
  log.info(`secrets resolved from ${store.description}: ${resolved.join(', ')}`);
  // A careless log line, as a bug might write one: the redactor must catch the resolved values.
  log.debug('resolved values:', config.webhook.bearerToken, config.tunnel?.token ?? null);
  const agent = new Agent(config, log, agentServices(config, log));
  await agent.start();
  process.stdout.write(`ready ${agent.webhook!.url}\n`);
  process.once('SIGTERM', () => {
    void agent.stop().then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
