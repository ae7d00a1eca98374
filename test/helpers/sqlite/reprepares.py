"""
Counts re-plans of prepared lookups on the system's SQLite library, from Python through ctypes (Debian's
Python has no extension loading, and its sqlite3 module no statement status): each lookup is prepared
once and, per params entry, bound, stepped to its end, reset and its bindings cleared, as the Node
bindings do; then sqlite3_stmt_status(SQLITE_STMTSTATUS_REPREPARE) is read. Usage:
  python3 reprepares.py DB_FILE JOB_JSON
JOB_JSON: {"lookups": {name: sql}, "params": {name: [[...] or {...}, ...]}}; named parameters are given
without their prefix. Prints {"sqlite": version, "reprepares": {name: n}, "rows": {name: [row counts]}}.
"""
import ctypes
import ctypes.util
import json
import sys

SQLITE_OK, SQLITE_ROW, SQLITE_DONE = 0, 100, 101
SQLITE_OPEN_READONLY, SQLITE_TRANSIENT = 0x1, ctypes.c_void_p(-1)
SQLITE_STMTSTATUS_REPREPARE = 5

lib = ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")
lib.sqlite3_libversion.restype = ctypes.c_char_p
lib.sqlite3_errmsg.restype = ctypes.c_char_p
lib.sqlite3_bind_parameter_name.restype = ctypes.c_char_p
lib.sqlite3_bind_text.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
lib.sqlite3_bind_int64.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64]
for f in ("sqlite3_step", "sqlite3_reset", "sqlite3_clear_bindings", "sqlite3_finalize", "sqlite3_bind_parameter_count"):
    getattr(lib, f).argtypes = [ctypes.c_void_p]
lib.sqlite3_bind_parameter_name.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.sqlite3_stmt_status.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]

db_file, job = sys.argv[1], json.loads(sys.argv[2])
db = ctypes.c_void_p()
if lib.sqlite3_open_v2(db_file.encode(), ctypes.byref(db), SQLITE_OPEN_READONLY, None) != SQLITE_OK:
    sys.exit(f"cannot open {db_file}")


def bind(stmt, index, value):
    if isinstance(value, int):
        return lib.sqlite3_bind_int64(stmt, index, value)
    return lib.sqlite3_bind_text(stmt, index, str(value).encode(), -1, SQLITE_TRANSIENT)


reprepares, rows = {}, {}
for name, sql in job["lookups"].items():
    stmt = ctypes.c_void_p()
    if lib.sqlite3_prepare_v2(db, sql.encode(), -1, ctypes.byref(stmt), None) != SQLITE_OK:
        sys.exit(f"{name}: {lib.sqlite3_errmsg(db).decode()}")
    counts = []
    for params in job["params"][name]:
        for i in range(1, lib.sqlite3_bind_parameter_count(stmt) + 1):
            value = params[lib.sqlite3_bind_parameter_name(stmt, i).decode()[1:]] if isinstance(params, dict) else params[i - 1]
            if bind(stmt, i, value) != SQLITE_OK:
                sys.exit(f"{name}: cannot bind parameter {i}")
        n = 0
        while True:
            rc = lib.sqlite3_step(stmt)
            if rc == SQLITE_ROW:
                n += 1
            elif rc == SQLITE_DONE:
                break
            else:
                sys.exit(f"{name}: {lib.sqlite3_errmsg(db).decode()}")
        lib.sqlite3_reset(stmt)
        lib.sqlite3_clear_bindings(stmt)
        counts.append(n)
    rows[name] = counts
    reprepares[name] = lib.sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_REPREPARE, 0)
    lib.sqlite3_finalize(stmt)
print(json.dumps({"sqlite": lib.sqlite3_libversion().decode(), "reprepares": reprepares, "rows": rows}))
