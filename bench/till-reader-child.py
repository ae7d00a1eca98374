"""
A till in its own process on the system's SQLite (bench/till-reader-child.ts's twin), for
`npm run bench -- --sizes L --till-process --till-reader python`. A till does not link SQLite 3.54 as
better-sqlite3 does: a POS over ODBC uses the system's library or one bundled with its driver, and
better-sqlite3 clears a statement's bindings after every run, which makes SQLite 3.54 plan a bound
lookup over a join again each time (docs/performance.md). This reader uses Python's sqlite3 module
on the system library (Debian 12: SQLite 3.40.1, the one its SQLite ODBC driver uses).

Usage: python3 bench/till-reader-child.py DB_FILE OUT_FILE LOCATIONS(comma list) MAX_PLU [PLU_FILE]
Same protocol as the TypeScript reader: every PLU looked up once before READY (warm), then lookups in
batches of 50 with a 1 ms pause; on SIGTERM it writes [epochMs, latencyMs, ...] to OUT_FILE and exits.
"""
import json
import random
import signal
import sqlite3
import sys
import time

db_file, out_file, location_list, max_plu = sys.argv[1:5]
plu_file = sys.argv[5] if len(sys.argv) > 5 else None
locations = [int(x) for x in location_list.split(",")]
plus = json.load(open(plu_file)) if plu_file else None
db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, isolation_level=None)
db.execute("PRAGMA busy_timeout = 5000")
PRICES = "SELECT plu, item_name, tariff_name, sell_price_minor, tax_code FROM pos_prices_today WHERE location_id = ? AND plu = ?"
AVAILABILITY = "SELECT meal_period, status FROM pos_availability_today WHERE location_id = ? AND plu = ?"
rng = random.Random(99)
samples = []
stopping = False


def stop(_signum, _frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)
cursor = db.cursor()
# The warm-up also counts the lookups that found prices, so the bench knows the till reads the menu.
warmed = 0
priced = 0
if plus:
    for location in locations:
        for plu in plus:
            if cursor.execute(PRICES, (location, plu)).fetchall():
                priced += 1
            cursor.execute(AVAILABILITY, (location, plu)).fetchall()
            warmed += 1
sys.stdout.write(f"READY till-reader (SQLite {sqlite3.sqlite_version}; {priced} of {warmed} lookups priced)\n")
sys.stdout.flush()
while not stopping:
    for _ in range(50):
        if stopping:
            break
        location = rng.choice(locations)
        plu = rng.choice(plus) if plus else str(rng.randint(1000, int(max_plu)))
        at = time.time() * 1000
        t0 = time.perf_counter()
        cursor.execute(PRICES, (location, plu)).fetchall()
        cursor.execute(AVAILABILITY, (location, plu)).fetchall()
        samples.extend((at, (time.perf_counter() - t0) * 1000))
    # A till does other things between lookups too.
    time.sleep(0.001)
with open(out_file, "w") as out:
    json.dump(samples, out)
db.close()
sys.exit(0)
