"""Python's psycopg (3) against `tessera serve`: parameterized statements in both
parameter formats, every type read back exactly, errors with their SQLSTATE.

Run by tests/psycopg.rs with the server's port: python3 psycopg_client.py PORT
"""

import datetime
import sys
from decimal import Decimal

import psycopg

port = int(sys.argv[1])
with psycopg.connect(host="127.0.0.1", port=port, user="py", dbname="tessera", autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE py (id INT NOT NULL, name VARCHAR, price DECIMAL(18,4), d DATE,"
        " ts TIMESTAMP, ok BOOLEAN, f DOUBLE, big BIGINT)"
    )
    rows = [
        (1, "åbc", Decimal("12345678901234.5678"), datetime.date(2024, 2, 29),
         datetime.datetime(2024, 2, 29, 13, 5, 0, 250000), True, 0.1, 2**63 - 1),
        (2, None, Decimal("-0.0001"), datetime.date(1900, 1, 1),
         datetime.datetime(1970, 1, 1), False, -2.5e-300, -(2**63)),
        (3, "it's", Decimal("0"), None, None, None, None, None),
    ]
    # Text parameters (psycopg's default), then binary ones.
    cur.executemany("INSERT INTO py VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows[:2])
    cur.execute("INSERT INTO py VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows[2], binary=True)
    for binary in (False, True):
        cur.execute("SELECT id, name, price, d, ts, ok, f, big FROM py WHERE id >= %s ORDER BY id", (1,), binary=binary)
        got = cur.fetchall()
        assert got == rows, f"binary={binary}: {got!r}"
        types = [d.type_code for d in cur.description]
        # int4, text, numeric, date, timestamp, bool, float8, int8
        assert types == [23, 25, 1700, 1082, 1114, 16, 701, 20], types
    cur.execute("SELECT sum(price), count(*), avg(id) FROM py WHERE name IS NOT NULL OR id = %s", (2,))
    total, count, avg = cur.fetchone()
    assert total == Decimal("12345678901234.5677") and count == 3, (total, count)
    assert abs(float(avg) - 2.0) < 1e-12, avg
    cur.execute("SELECT name FROM py WHERE name = %s", ("it's",))
    assert cur.fetchall() == [("it's",)]
    try:
        cur.execute("SELECT * FROM missing_table")
        raise AssertionError("no error for a missing table")
    except psycopg.errors.UndefinedTable as e:
        assert e.sqlstate == "42P01", e.sqlstate
    try:
        cur.execute("SELECT 1 / 0")
        raise AssertionError("no error for a division by zero")
    except psycopg.errors.DivisionByZero as e:
        assert e.sqlstate == "22012", e.sqlstate
    # The connection is still usable after errors.
    cur.execute("SELECT count(*) FROM py")
    assert cur.fetchone() == (3,)
    # A transaction block (psycopg's default mode) with reads only.
with psycopg.connect(host="127.0.0.1", port=port, user="py", dbname="tessera") as conn:
    with conn.cursor() as cur:
        cur.execute("SELECT max(big) FROM py")
        assert cur.fetchone() == (2**63 - 1,)
    conn.commit()
print("psycopg", psycopg.__version__, "ok")
