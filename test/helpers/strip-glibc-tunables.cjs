// Preloaded with `node --require` (NODE_OPTIONS) into a child `pos-sync-agent serve`: removes
// GLIBC_TUNABLES from its environment before bin/ runs, as glibc 2.39 and later do for a privileged
// (AT_SECURE) process, e.g. a node given cap_net_bind_service to listen on port 443.
delete process.env.GLIBC_TUNABLES;
