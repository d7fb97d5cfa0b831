# Runs a benchmark suite in DuckDB for `tessera bench --engine duckdb`.
# Reads a JSON spec on stdin: {"threads": N, "runs": R, "tables": {name: [parquet files]},
# "queries": [{"name": ..., "sql": ...}]}; prints one JSON object on stdout.
import datetime
import decimal
import json
import sys
import time

spec = json.load(sys.stdin)
try:
    import duckdb
except Exception as e:  # the module is optional: report, do not fail
    print(json.dumps({"error": f"the duckdb Python module is not available ({e}); pip install duckdb"}))
    sys.exit(0)


def text(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (datetime.date, datetime.datetime, decimal.Decimal)):
        return str(v)
    return str(v)


con = duckdb.connect()
con.execute("SET enable_progress_bar = false")  # it would print to stdout, which carries the JSON
con.execute(f"SET threads = {int(spec['threads'])}")
start = time.perf_counter()
for table, files in spec["tables"].items():
    listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    con.execute(f'CREATE TABLE "{table}" AS SELECT * FROM read_parquet([{listed}])')
out = {"version": duckdb.__version__, "load_seconds": time.perf_counter() - start, "queries": []}
for q in spec["queries"]:
    times, rows, error = [], None, None
    for _ in range(int(spec["runs"]) + 1):
        t = time.perf_counter()
        try:
            result = con.execute(q["sql"]).fetchall()
        except Exception as e:
            error = str(e)
            break
        times.append((time.perf_counter() - t) * 1e3)
        rows = result
    out["queries"].append({
        "name": q["name"],
        "times_ms": times,
        "error": error,
        "rows": None if rows is None else [[text(v) for v in r] for r in rows],
    })
print(json.dumps(out))
