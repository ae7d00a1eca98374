# Prints, as JSON, the column types an ODBC application sees for the given tables or views
# (SQLColumns through unixODBC and the SQLite3 ODBC driver). Usage: odbc-columns.py DB NAME...
import pyodbc, sys, json
c = pyodbc.connect(f"DRIVER={{SQLite3}};Database={sys.argv[1]}")
cur = c.cursor()
out = {}
for view in sys.argv[2:]:
    out[view] = {r.column_name: r.type_name for r in cur.columns(table=view)}
print(json.dumps(out))
