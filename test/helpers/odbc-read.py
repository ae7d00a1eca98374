# Runs one query through unixODBC and the SQLite3 ODBC driver (libsqliteodbc) and prints its rows as
# JSON, each value as the text of what the driver returned (so no reader rounds a large integer).
# Usage: odbc-read.py DB OPTIONS SQL, where OPTIONS is appended to the connection string (e.g.
# ";BigInt=1", or "" for the driver's defaults).
import pyodbc, sys, json
c = pyodbc.connect(f"DRIVER={{SQLite3}};Database={sys.argv[1]}{sys.argv[2]}")
rows = c.cursor().execute(sys.argv[3]).fetchall()
print(json.dumps([[None if v is None else str(v) for v in row] for row in rows]))
