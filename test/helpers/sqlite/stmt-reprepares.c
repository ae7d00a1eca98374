/*
 * A SQLite extension for tests: stmt_reprepares(sql) answers how many times SQLite has prepared again
 * the statements of this connection whose text is `sql` (sqlite3_stmt_status, SQLITE_STMTSTATUS_REPREPARE),
 * or NULL when the connection has no such statement. Loaded into each binding's own SQLite
 * (better-sqlite3, node:sqlite, Python's sqlite3 on the system library), it counts re-plans where
 * the bindings themselves expose no statement status. Built by test/system/lookup-replan.test.ts.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include <string.h>

static void stmt_reprepares(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *sql = (const char *)sqlite3_value_text(argv[0]);
  sqlite3_int64 total = -1;
  for (sqlite3_stmt *s = sqlite3_next_stmt(db, 0); s != 0; s = sqlite3_next_stmt(db, s)) {
    const char *text = sqlite3_sql(s);
    if (sql == 0 || text == 0 || strcmp(text, sql) != 0) continue;
    if (total < 0) total = 0;
    total += sqlite3_stmt_status(s, SQLITE_STMTSTATUS_REPREPARE, 0);
  }
  if (total < 0) sqlite3_result_null(ctx);
  else sqlite3_result_int64(ctx, total);
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_extension_init(sqlite3 *db, char **error, const sqlite3_api_routines *api) {
  (void)error;
  SQLITE_EXTENSION_INIT2(api);
  return sqlite3_create_function(db, "stmt_reprepares", 1, SQLITE_UTF8, 0, stmt_reprepares, 0, 0);
}
