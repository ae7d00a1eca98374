// Preloaded with `node --require` (NODE_OPTIONS) into a child `pos-sync-agent serve`: on SIGUSR2
// (Linux), writes the packages its main thread has loaded from node_modules so far, one per line, to
// the file named by POS_SYNC_LOADED_MODULES_FILE. Worker threads have require caches of their own and
// are not included.
const fs = require('node:fs');

const out = process.env.POS_SYNC_LOADED_MODULES_FILE;
if (out) {
  process.on('SIGUSR2', () => {
    const packages = new Set();
    for (const file of Object.keys(require.cache)) {
      const m = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file);
      if (m) packages.add(m[1].replace(/\\/g, '/'));
    }
    // Written whole, then renamed: the reader never sees half a list.
    fs.writeFileSync(`${out}.part`, [...packages].sort().join('\n') + '\n');
    fs.renameSync(`${out}.part`, out);
  });
}
