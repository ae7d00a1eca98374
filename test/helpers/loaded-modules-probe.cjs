// Preloaded with `node --require` (NODE_OPTIONS) into a child `pos-sync-agent serve`: on SIGUSR2
// (Linux), writes the packages its main thread has loaded from node_modules so far, one per line, to
// the file named by POS_SYNC_LOADED_MODULES_FILE, and every other file it has loaded (the agent's own
// code), one path per line, to that name with `.own` added. Worker threads have require caches of
// their own and are not included.
const fs = require('node:fs');
const path = require('node:path');

const out = process.env.POS_SYNC_LOADED_MODULES_FILE;
if (out) {
  process.on('SIGUSR2', () => {
    const packages = new Set();
    const own = [];
    for (const file of Object.keys(require.cache)) {
      const m = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file);
      if (m) packages.add(m[1].replace(/\\/g, '/'));
      else if (file !== path.join(__dirname, 'loaded-modules-probe.cjs')) own.push(file);
    }
    fs.writeFileSync(`${out}.own`, own.sort().join('\n') + '\n');
    // Written whole, then renamed: the reader never sees half a list.
    fs.writeFileSync(`${out}.part`, [...packages].sort().join('\n') + '\n');
    fs.renameSync(`${out}.part`, out);
  });
}
