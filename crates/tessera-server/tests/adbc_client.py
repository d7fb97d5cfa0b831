"""Python's ADBC Flight SQL driver against `tessera serve --flight-listen`: basic
authentication, writes, every type read back as Arrow exactly, a parameterized query,
errors, and the catalog (adbc_get_objects, adbc_get_table_schema).

Run by tests/adbc.rs with the server's port: python3 adbc_client.py PORT
"""

import datetime
import sys
from decimal import Decimal

import adbc_driver_flightsql.dbapi as flightsql
import adbc_driver_manager
import pyarrow as pa

port = int(sys.argv[1])
uri = f"grpc://127.0.0.1:{port}"

# A wrong password is refused at connect time. (arrow-go sends basic credentials in
# unpadded base64: both passwords here need padding.)
try:
    flightsql.connect(uri, db_kwargs={"username": "alice", "password": "wrong"}).close()
    raise AssertionError("connected with a wrong password")
except adbc_driver_manager.Error as e:
    assert "password authentication failed" in str(e), e

with flightsql.connect(uri, db_kwargs={"username": "alice", "password": "s3cret!"}, autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE py (id BIGINT NOT NULL, name VARCHAR, price DECIMAL(18,4), d DATE, ok BOOLEAN, f DOUBLE)"
    )
    cur.execute(
        "INSERT INTO py VALUES (1, 'åbc', 12345678901234.5678, DATE '2024-02-29', true, 0.1),"
        " (2, NULL, -0.0001, DATE '1900-01-01', false, CAST('-2.5e-300' AS DOUBLE)), (3, 'it''s', 0, NULL, NULL, NULL)"
    )
    cur.execute("SELECT id, name, price, d, ok, f FROM py ORDER BY id")
    table = cur.fetch_arrow_table()
    expected_types = [pa.int64(), pa.string(), pa.decimal128(18, 4), pa.date32(), pa.bool_(), pa.float64()]
    assert table.schema.types == expected_types, table.schema
    assert table.to_pylist() == [
        {"id": 1, "name": "åbc", "price": Decimal("12345678901234.5678"), "d": datetime.date(2024, 2, 29), "ok": True, "f": 0.1},
        {"id": 2, "name": None, "price": Decimal("-0.0001"), "d": datetime.date(1900, 1, 1), "ok": False, "f": -2.5e-300},
        {"id": 3, "name": "it's", "price": Decimal("0.0000"), "d": None, "ok": None, "f": None},
    ], table.to_pylist()

    # Parameters are bound as an Arrow batch to a prepared statement ($1 placeholders).
    cur.execute("SELECT name, price FROM py WHERE id = $1", (3,))
    assert cur.fetchall() == [("it's", Decimal("0.0000"))]
    cur.execute("SELECT sum(price) AS total FROM py WHERE id <= $1", (2,))
    assert cur.fetchone() == (Decimal("12345678901234.5677"),)

    # Errors carry the engine's message.
    try:
        cur.execute("SELECT * FROM missing_table")
        raise AssertionError("no error for a missing table")
    except adbc_driver_manager.ProgrammingError as e:
        assert "missing_table" in str(e), e

    # The catalog, as tools browse it.
    objects = conn.adbc_get_objects(depth="all", db_schema_filter="public").read_all().to_pylist()
    tables = [
        (catalog["catalog_name"], schema["db_schema_name"], t["table_name"], [c["column_name"] for c in t["table_columns"]])
        for catalog in objects
        for schema in catalog["catalog_db_schemas"] or []
        for t in schema["db_schema_tables"] or []
    ]
    assert tables == [("tessera", "public", "py", ["id", "name", "price", "d", "ok", "f"])], tables
    schema = conn.adbc_get_table_schema("py", db_schema_filter="public")
    assert schema.field("price").type == pa.decimal128(18, 4), schema
    info = conn.adbc_get_info()
    assert info.get("vendor_name") == "Tessera", info

print("ok")
