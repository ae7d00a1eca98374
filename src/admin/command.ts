import { AppError } from '../errors';
import { EXIT, type Command } from '../cli/command';
import { loadOrCreateToken, tokenFilePath } from './token';

/** Prints the status window's login address again (for a manager who lost the tab or the cookie). */
export const adminUrl: Command = {
  name: 'admin-url',
  summary: 'print the status window address with its access token (keep it private)',
  usage: '',
  run(ctx) {
    const config = ctx.config();
    if (!config.admin.enabled) throw new AppError('admin_disabled', 400, 'the status window is disabled (admin.enabled is false)');
    if (config.admin.port === 0) throw new AppError('admin_port_dynamic', 400, 'admin.port is 0 (a free port chosen at start-up): use the address `serve` printed');
    const token = loadOrCreateToken(tokenFilePath(config.dataDir, config.admin.tokenFile));
    const host = config.admin.host === '::1' ? '[::1]' : config.admin.host;
    const url = `http://${host}:${config.admin.port}/?token=${encodeURIComponent(token)}`;
    if (ctx.json) ctx.printJson({ url });
    else ctx.out(url);
    return EXIT.ok;
  },
};
