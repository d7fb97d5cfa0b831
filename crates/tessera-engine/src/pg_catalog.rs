//! PostgreSQL's system catalogs (`pg_catalog`), enough for clients to describe the
//! database: psql's `\dt`, `\d`, `\d TABLE`, `\dn` and `\l`, and the catalog queries of
//! drivers and tools.
//!
//! [`PgCatalogSchema`] is a DataFusion schema `pg_catalog` next to `public` in the
//! `tessera` catalog. Its tables are built at each scan from the store's manifest and
//! the session's own views and external tables, so they are never stale: a table gets
//! OID 16384 + its position in the manifest (PostgreSQL's first user OID), a session
//! table the OIDs after those. Catalog tables of features Tessera does not have
//! (indexes, constraints, triggers, policies, publications, …) exist with PostgreSQL's
//! columns and no rows.
//!
//! Values follow PostgreSQL's catalog layout with two simplifications: OIDs and the
//! other object references are `BIGINT`, and array columns (`reloptions`, ACLs,
//! `int2vector`s) are text columns that are always NULL, since no Tessera object has
//! options or privileges (an empty array is NULL, as `ARRAY(…)` of no rows is in
//! catalog queries: see [`crate::pg_compat`]).
//!
//! The module also holds the mapping of Arrow types to PostgreSQL types ([`pg_type`],
//! shared with the wire protocol's server) and the catalog functions clients call
//! ([`register_functions`]: `format_type`, `pg_get_userbyid`, `pg_table_is_visible`, …).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float32Array, Int16Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef};
use datafusion::catalog::{SchemaProvider, Session, TableProvider};
use datafusion::common::{ScalarValue, exec_err};
use datafusion::datasource::TableType;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;

use crate::catalog::{CATALOG, SCHEMA, StoreSchema};

/// Name of the schema.
pub const PG_CATALOG: &str = "pg_catalog";

/// The first OID of user objects in PostgreSQL; tables get this plus their position.
pub const FIRST_USER_OID: i64 = 16384;

/// OIDs of the schemas (PostgreSQL's for `pg_catalog` and `public`).
const PG_CATALOG_OID: i64 = 11;
const PUBLIC_OID: i64 = 2200;
const INFORMATION_SCHEMA_OID: i64 = 13000;
/// The one role (owner of everything) and the one database.
const OWNER_OID: i64 = 10;
const OWNER: &str = "tessera";
const DATABASE_OID: i64 = 16383;
/// The table access method of store tables.
const TABLE_AM_OID: i64 = 2;
/// PostgreSQL's encoding number of UTF8.
const UTF8_ENCODING: i64 = 6;
/// Collations: the database's default (text types) and "C" (`name`).
const DEFAULT_COLLATION: i64 = 100;
const C_COLLATION: i64 = 950;

// ---------------------------------------------------------------------------------
// Types: Arrow to PostgreSQL, and the names format_type() gives them.

/// One PostgreSQL type as `pg_type` lists it.
#[derive(Debug, Clone, Copy)]
pub struct PgType {
    /// The type's OID.
    pub oid: u32,
    /// `pg_type.typname`.
    pub typname: &'static str,
    /// The SQL name `format_type` prints (`integer`, `character varying`, …).
    pub sql_name: &'static str,
    /// `typlen`: bytes, or -1 for variable length.
    pub len: i16,
    /// `typcategory`.
    pub category: char,
    /// `typcollation`: collatable types have the default collation.
    pub collation: i64,
}

const fn t(oid: u32, typname: &'static str, sql_name: &'static str, len: i16, category: char, collation: i64) -> PgType {
    PgType { oid, typname, sql_name, len, category, collation }
}

/// The types `pg_type` lists: those Tessera's columns map to, and those of the
/// catalog's own columns and casts.
pub const TYPES: &[PgType] = &[
    t(16, "bool", "boolean", 1, 'B', 0),
    t(17, "bytea", "bytea", -1, 'U', 0),
    t(18, "char", "\"char\"", 1, 'Z', 0),
    t(19, "name", "name", 64, 'S', C_COLLATION),
    t(20, "int8", "bigint", 8, 'N', 0),
    t(21, "int2", "smallint", 2, 'N', 0),
    t(23, "int4", "integer", 4, 'N', 0),
    t(25, "text", "text", -1, 'S', DEFAULT_COLLATION),
    t(26, "oid", "oid", 4, 'N', 0),
    t(700, "float4", "real", 4, 'N', 0),
    t(701, "float8", "double precision", 8, 'N', 0),
    t(1042, "bpchar", "character", -1, 'S', DEFAULT_COLLATION),
    t(1043, "varchar", "character varying", -1, 'S', DEFAULT_COLLATION),
    t(1082, "date", "date", 4, 'D', 0),
    t(1083, "time", "time without time zone", 8, 'D', 0),
    t(1114, "timestamp", "timestamp without time zone", 8, 'D', 0),
    t(1184, "timestamptz", "timestamp with time zone", 8, 'D', 0),
    t(1186, "interval", "interval", 16, 'T', 0),
    t(1700, "numeric", "numeric", -1, 'N', 0),
    t(2205, "regclass", "regclass", 4, 'N', 0),
    t(2206, "regtype", "regtype", 4, 'N', 0),
];

/// Type OIDs used by name below.
const BOOL: u32 = 16;
const BYTEA: u32 = 17;
const INT8: u32 = 20;
const INT2: u32 = 21;
const INT4: u32 = 23;
const TEXT: u32 = 25;
const FLOAT4: u32 = 700;
const FLOAT8: u32 = 701;
const DATE: u32 = 1082;
const TIMESTAMP: u32 = 1114;
const TIMESTAMPTZ: u32 = 1184;
const NUMERIC: u32 = 1700;

/// The type with `oid`, if `pg_type` lists it.
pub fn type_by_oid(oid: i64) -> Option<&'static PgType> {
    TYPES.iter().find(|t| i64::from(t.oid) == oid)
}

/// The PostgreSQL type (OID) a column of Arrow type `dt` has, and its type modifier
/// (-1: none; `numeric(p, s)` packs `((p << 16) | s) + 4`, as PostgreSQL does).
/// Integers widen to the next PostgreSQL integer that holds every value (UInt64 to
/// numeric); types PostgreSQL has no counterpart for are text, as Arrow prints them.
pub fn pg_type(dt: &DataType) -> (u32, i32) {
    match dt {
        DataType::Boolean => (BOOL, -1),
        DataType::Int8 | DataType::Int16 | DataType::UInt8 => (INT2, -1),
        DataType::Int32 | DataType::UInt16 => (INT4, -1),
        DataType::Int64 | DataType::UInt32 => (INT8, -1),
        DataType::UInt64 => (NUMERIC, -1),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) if *s >= 0 => {
            (NUMERIC, ((i32::from(*p) << 16) | i32::from(*s)) + 4)
        }
        DataType::Decimal128(..) | DataType::Decimal256(..) => (NUMERIC, -1),
        DataType::Float16 | DataType::Float32 => (FLOAT4, -1),
        DataType::Float64 => (FLOAT8, -1),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => (TEXT, -1),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => (BYTEA, -1),
        DataType::Date32 | DataType::Date64 => (DATE, -1),
        DataType::Timestamp(_, None) => (TIMESTAMP, -1),
        DataType::Timestamp(_, Some(_)) => (TIMESTAMPTZ, -1),
        DataType::Dictionary(_, value) => pg_type(value),
        _ => (TEXT, -1),
    }
}

/// PostgreSQL's `format_type(oid, typmod)`: the SQL name of a type with its modifier
/// (`integer`, `numeric(12,2)`, `character varying(20)`). A NULL `typmod` prints the
/// bare name, as does -1 (except `bpchar`, which PostgreSQL prints as itself then);
/// an unknown OID prints `???`.
pub fn format_type(oid: i64, typmod: Option<i64>) -> String {
    let Some(ty) = type_by_oid(oid) else { return "???".into() };
    let modifier = typmod.filter(|&m| m >= 0);
    match (ty.typname, modifier) {
        ("numeric", Some(m)) if m >= 4 => {
            let m = m - 4;
            format!("numeric({},{})", (m >> 16) & 0xffff, m & 0xffff)
        }
        ("varchar" | "bpchar", Some(m)) if m >= 4 => format!("{}({})", ty.sql_name, m - 4),
        ("timestamp" | "timestamptz" | "time", Some(m)) => {
            let (base, zone) = ty.sql_name.split_once(' ').unwrap_or((ty.sql_name, ""));
            format!("{base}({m}) {zone}")
        }
        ("bpchar", None) if typmod.is_some() => "bpchar".into(),
        _ => ty.sql_name.into(),
    }
}

// ---------------------------------------------------------------------------------
// Catalog tables: their columns, and rows built from a snapshot of the relations.

/// The kind of a catalog column.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ty {
    /// An OID or another object reference (BIGINT, 0 when unset).
    Oid,
    Int2,
    Int4,
    Float4,
    Bool,
    /// `name` and `"char"` (non-NULL text, '' when unset).
    Name,
    /// Text that may be NULL.
    Text,
    /// An array (ACLs, options, `int2vector`s): a text column, always NULL, since
    /// Tessera's objects have no privileges or options and no keys to list.
    Array,
}

impl Ty {
    fn arrow(self) -> (DataType, bool) {
        match self {
            Ty::Oid => (DataType::Int64, false),
            Ty::Int2 => (DataType::Int16, false),
            Ty::Int4 => (DataType::Int32, false),
            Ty::Float4 => (DataType::Float32, false),
            Ty::Bool => (DataType::Boolean, false),
            Ty::Name => (DataType::Utf8, false),
            Ty::Text | Ty::Array => (DataType::Utf8, true),
        }
    }
}

/// A catalog table: its name, its OID and its columns (PostgreSQL 16's, in order).
struct Def {
    name: &'static str,
    oid: i64,
    columns: &'static [(&'static str, Ty)],
}

use Ty::{Array as A, Bool as B, Float4 as F4, Int2 as I2, Int4 as I4, Name as N, Oid as O, Text as T};

const DEFS: &[Def] = &[
    Def { name: "pg_namespace", oid: 2615, columns: &[("oid", O), ("nspname", N), ("nspowner", O), ("nspacl", A)] },
    Def {
        name: "pg_class",
        oid: 1259,
        columns: &[
            ("oid", O), ("relname", N), ("relnamespace", O), ("reltype", O), ("reloftype", O), ("relowner", O),
            ("relam", O), ("relfilenode", O), ("reltablespace", O), ("relpages", I4), ("reltuples", F4),
            ("relallvisible", I4), ("reltoastrelid", O), ("relhasindex", B), ("relisshared", B),
            ("relpersistence", N), ("relkind", N), ("relnatts", I2), ("relchecks", I2), ("relhasrules", B),
            ("relhastriggers", B), ("relhassubclass", B), ("relrowsecurity", B), ("relforcerowsecurity", B),
            ("relispopulated", B), ("relreplident", N), ("relispartition", B), ("relrewrite", O),
            ("relfrozenxid", O), ("relminmxid", O), ("relacl", A), ("reloptions", A), ("relpartbound", T),
        ],
    },
    Def {
        name: "pg_attribute",
        oid: 1249,
        columns: &[
            ("attrelid", O), ("attname", N), ("atttypid", O), ("attlen", I2), ("attnum", I2), ("attcacheoff", I4),
            ("atttypmod", I4), ("attndims", I2), ("attbyval", B), ("attalign", N), ("attstorage", N),
            ("attcompression", N), ("attnotnull", B), ("atthasdef", B), ("atthasmissing", B), ("attidentity", N),
            ("attgenerated", N), ("attisdropped", B), ("attislocal", B), ("attinhcount", I2), ("attstattarget", I2),
            ("attcollation", O), ("attacl", A), ("attoptions", A), ("attfdwoptions", A), ("attmissingval", A),
        ],
    },
    Def {
        name: "pg_type",
        oid: 1247,
        columns: &[
            ("oid", O), ("typname", N), ("typnamespace", O), ("typowner", O), ("typlen", I2), ("typbyval", B),
            ("typtype", N), ("typcategory", N), ("typispreferred", B), ("typisdefined", B), ("typdelim", N),
            ("typrelid", O), ("typsubscript", N), ("typelem", O), ("typarray", O), ("typinput", N),
            ("typoutput", N), ("typreceive", N), ("typsend", N), ("typmodin", N), ("typmodout", N),
            ("typanalyze", N), ("typalign", N), ("typstorage", N), ("typnotnull", B), ("typbasetype", O),
            ("typtypmod", I4), ("typndims", I4), ("typcollation", O), ("typdefaultbin", T), ("typdefault", T),
            ("typacl", A),
        ],
    },
    Def { name: "pg_am", oid: 2601, columns: &[("oid", O), ("amname", N), ("amhandler", N), ("amtype", N)] },
    Def {
        name: "pg_database",
        oid: 1262,
        columns: &[
            ("oid", O), ("datname", N), ("datdba", O), ("encoding", I4), ("datlocprovider", N), ("datistemplate", B),
            ("datallowconn", B), ("datconnlimit", I4), ("datfrozenxid", O), ("datminmxid", O), ("dattablespace", O),
            ("datcollate", N), ("datctype", N), ("daticulocale", T), ("daticurules", T), ("datcollversion", T),
            ("datacl", A),
        ],
    },
    Def {
        name: "pg_collation",
        oid: 3456,
        columns: &[
            ("oid", O), ("collname", N), ("collnamespace", O), ("collowner", O), ("collprovider", N),
            ("collisdeterministic", B), ("collencoding", I4), ("collcollate", T), ("collctype", T),
            ("colliculocale", T), ("collicurules", T), ("collversion", T),
        ],
    },
    Def {
        name: "pg_tablespace",
        oid: 1213,
        columns: &[("oid", O), ("spcname", N), ("spcowner", O), ("spcacl", A), ("spcoptions", A)],
    },
    Def {
        name: "pg_roles",
        oid: 12001,
        columns: &[
            ("rolname", N), ("rolsuper", B), ("rolinherit", B), ("rolcreaterole", B), ("rolcreatedb", B),
            ("rolcanlogin", B), ("rolreplication", B), ("rolconnlimit", I4), ("rolpassword", T),
            ("rolvaliduntil", T), ("rolbypassrls", B), ("rolconfig", A), ("oid", O),
        ],
    },
    // Catalogs of features Tessera does not have: always empty.
    Def {
        name: "pg_index",
        oid: 2610,
        columns: &[
            ("indexrelid", O), ("indrelid", O), ("indnatts", I2), ("indnkeyatts", I2), ("indisunique", B),
            ("indnullsnotdistinct", B), ("indisprimary", B), ("indisexclusion", B), ("indimmediate", B),
            ("indisclustered", B), ("indisvalid", B), ("indcheckxmin", B), ("indisready", B), ("indislive", B),
            ("indisreplident", B), ("indkey", A), ("indcollation", A), ("indclass", A), ("indoption", A),
            ("indexprs", T), ("indpred", T),
        ],
    },
    Def {
        name: "pg_constraint",
        oid: 2606,
        columns: &[
            ("oid", O), ("conname", N), ("connamespace", O), ("contype", N), ("condeferrable", B),
            ("condeferred", B), ("convalidated", B), ("conrelid", O), ("contypid", O), ("conindid", O),
            ("conparentid", O), ("confrelid", O), ("confupdtype", N), ("confdeltype", N), ("confmatchtype", N),
            ("conislocal", B), ("coninhcount", I2), ("connoinherit", B), ("conkey", A), ("confkey", A),
            ("conpfeqop", A), ("conppeqop", A), ("conffeqop", A), ("confdelsetcols", A), ("conexclop", A),
            ("conbin", T),
        ],
    },
    Def {
        name: "pg_inherits",
        oid: 2611,
        columns: &[("inhrelid", O), ("inhparent", O), ("inhseqno", I4), ("inhdetachpending", B)],
    },
    Def {
        name: "pg_partitioned_table",
        oid: 3350,
        columns: &[
            ("partrelid", O), ("partstrat", N), ("partnatts", I2), ("partdefid", O), ("partattrs", A),
            ("partclass", A), ("partcollation", A), ("partexprs", T),
        ],
    },
    Def {
        name: "pg_policy",
        oid: 3256,
        columns: &[
            ("oid", O), ("polname", N), ("polrelid", O), ("polcmd", N), ("polpermissive", B), ("polroles", A),
            ("polqual", T), ("polwithcheck", T),
        ],
    },
    Def {
        name: "pg_trigger",
        oid: 2620,
        columns: &[
            ("oid", O), ("tgrelid", O), ("tgparentid", O), ("tgname", N), ("tgfoid", O), ("tgtype", I2),
            ("tgenabled", N), ("tgisinternal", B), ("tgconstrrelid", O), ("tgconstrindid", O), ("tgconstraint", O),
            ("tgdeferrable", B), ("tginitdeferred", B), ("tgnargs", I2), ("tgattr", A), ("tgargs", T),
            ("tgqual", T), ("tgoldtable", T), ("tgnewtable", T),
        ],
    },
    Def {
        name: "pg_rewrite",
        oid: 2618,
        columns: &[
            ("oid", O), ("rulename", N), ("ev_class", O), ("ev_type", N), ("ev_enabled", N), ("is_instead", B),
            ("ev_qual", T), ("ev_action", T),
        ],
    },
    Def {
        name: "pg_statistic_ext",
        oid: 3381,
        columns: &[
            ("oid", O), ("stxrelid", O), ("stxname", N), ("stxnamespace", O), ("stxowner", O),
            ("stxstattarget", I2), ("stxkeys", A), ("stxkind", A), ("stxexprs", T),
        ],
    },
    Def {
        name: "pg_publication",
        oid: 6104,
        columns: &[
            ("oid", O), ("pubname", N), ("pubowner", O), ("puballtables", B), ("pubinsert", B), ("pubupdate", B),
            ("pubdelete", B), ("pubtruncate", B), ("pubviaroot", B),
        ],
    },
    Def {
        name: "pg_publication_rel",
        oid: 6106,
        columns: &[("oid", O), ("prpubid", O), ("prrelid", O), ("prqual", T), ("prattrs", A)],
    },
    Def { name: "pg_publication_namespace", oid: 6237, columns: &[("oid", O), ("pnpubid", O), ("pnnspid", O)] },
    Def { name: "pg_attrdef", oid: 2604, columns: &[("oid", O), ("adrelid", O), ("adnum", I2), ("adbin", T)] },
    Def {
        name: "pg_description",
        oid: 2609,
        columns: &[("objoid", O), ("classoid", O), ("objsubid", I4), ("description", T)],
    },
    Def {
        name: "pg_extension",
        oid: 3079,
        columns: &[
            ("oid", O), ("extname", N), ("extowner", O), ("extnamespace", O), ("extrelocatable", B),
            ("extversion", T), ("extconfig", A), ("extcondition", A),
        ],
    },
    Def {
        name: "pg_auth_members",
        oid: 1261,
        columns: &[("oid", O), ("roleid", O), ("member", O), ("grantor", O), ("admin_option", B), ("inherit_option", B), ("set_option", B)],
    },
    Def {
        name: "pg_foreign_table",
        oid: 3118,
        columns: &[("ftrelid", O), ("ftserver", O), ("ftoptions", A)],
    },
];

fn def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name == name)
}

/// The catalogs of features Tessera does not have: tables without rows, always.
const ALWAYS_EMPTY: &[&str] = &[
    "pg_index", "pg_constraint", "pg_inherits", "pg_partitioned_table", "pg_policy", "pg_trigger", "pg_rewrite",
    "pg_statistic_ext", "pg_publication", "pg_publication_rel", "pg_publication_namespace", "pg_attrdef",
    "pg_description", "pg_extension", "pg_foreign_table", "pg_auth_members",
];

/// Whether `pg_catalog.name` never has rows (a catalog of a feature Tessera does not
/// have).
pub fn is_always_empty(name: &str) -> bool {
    ALWAYS_EMPTY.contains(&name)
}

/// Whether some catalog has an array column `name` (always NULL: Tessera's objects
/// have no options, privileges or keys).
pub fn is_array_column(name: &str) -> bool {
    DEFS.iter().any(|d| d.columns.iter().any(|(c, ty)| *c == name && *ty == Ty::Array))
}

/// Whether `pg_catalog` has a table `name`.
pub fn is_catalog_table(name: &str) -> bool {
    def(name).is_some()
}

/// A value of a catalog row.
#[derive(Debug, Clone)]
enum V {
    I(i64),
    F(f32),
    B(bool),
    S(String),
    Null,
}

impl From<i64> for V {
    fn from(v: i64) -> V {
        V::I(v)
    }
}
impl From<bool> for V {
    fn from(v: bool) -> V {
        V::B(v)
    }
}
impl From<&str> for V {
    fn from(v: &str) -> V {
        V::S(v.to_string())
    }
}
impl From<String> for V {
    fn from(v: String) -> V {
        V::S(v)
    }
}

/// Rows of one catalog table; every column starts at its default (0, false, '' or
/// NULL) and rows set the columns they have values for.
struct Rows {
    def: &'static Def,
    rows: Vec<Vec<V>>,
}

impl Rows {
    fn new(def: &'static Def) -> Rows {
        Rows { def, rows: Vec::new() }
    }

    /// Starts a row.
    fn row(&mut self) -> &mut Self {
        let defaults = self
            .def
            .columns
            .iter()
            .map(|(_, ty)| match ty {
                Ty::Oid | Ty::Int2 | Ty::Int4 => V::I(0),
                Ty::Float4 => V::F(0.0),
                Ty::Bool => V::B(false),
                Ty::Name => V::S(String::new()),
                Ty::Text | Ty::Array => V::Null,
            })
            .collect();
        self.rows.push(defaults);
        self
    }

    /// Sets a column of the last row.
    fn set(&mut self, column: &str, value: impl Into<V>) -> &mut Self {
        let at = self.def.columns.iter().position(|(c, _)| *c == column);
        debug_assert!(at.is_some(), "{} has no column {column}", self.def.name);
        if let (Some(at), Some(row)) = (at, self.rows.last_mut()) {
            row[at] = value.into();
        }
        self
    }

    fn batch(&self, schema: &SchemaRef) -> Result<RecordBatch> {
        let columns = self
            .def
            .columns
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| {
                let values = self.rows.iter().map(|r| &r[i]);
                let wrong = || DataFusionError::Internal(format!("{}.{name}: a value of the wrong type", self.def.name));
                let int = |v: &V| match v {
                    V::I(i) => Ok(*i),
                    _ => Err(wrong()),
                };
                Ok(match ty {
                    Ty::Oid => Arc::new(values.map(int).collect::<Result<Int64Array>>()?) as ArrayRef,
                    Ty::Int2 => Arc::new(
                        values.map(|v| int(v).and_then(|i| i16::try_from(i).map_err(|_| wrong()))).collect::<Result<Int16Array>>()?,
                    ),
                    Ty::Int4 => Arc::new(
                        values.map(|v| int(v).and_then(|i| i32::try_from(i).map_err(|_| wrong()))).collect::<Result<Int32Array>>()?,
                    ),
                    Ty::Float4 => Arc::new(
                        values
                            .map(|v| match v {
                                V::F(f) => Ok(*f),
                                _ => Err(wrong()),
                            })
                            .collect::<Result<Float32Array>>()?,
                    ),
                    Ty::Bool => Arc::new(
                        values
                            .map(|v| match v {
                                V::B(b) => Ok(Some(*b)),
                                _ => Err(wrong()),
                            })
                            .collect::<Result<BooleanArray>>()?,
                    ),
                    Ty::Name | Ty::Text | Ty::Array => Arc::new(
                        values
                            .map(|v| match v {
                                V::S(s) => Ok(Some(s.as_str())),
                                V::Null => Ok(None),
                                _ => Err(wrong()),
                            })
                            .collect::<Result<StringArray>>()?,
                    ),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(RecordBatch::try_new(Arc::clone(schema), columns)?)
    }
}

fn def_schema(def: &Def) -> SchemaRef {
    Arc::new(Schema::new(
        def.columns
            .iter()
            .map(|(name, ty)| {
                let (dt, nullable) = ty.arrow();
                Field::new(*name, dt, nullable)
            })
            .collect::<Vec<_>>(),
    ))
}

/// A relation as the catalogs describe it.
struct Relation {
    oid: i64,
    name: String,
    namespace: i64,
    /// `relkind`: 'r' table, 'v' view.
    kind: &'static str,
    columns: Vec<Field>,
    rows: f32,
    bytes: u64,
}

/// The relations at one moment: the store's tables, the session's views and external
/// tables, and the catalog's own tables.
fn relations(public: &StoreSchema) -> Result<Vec<Relation>> {
    let manifest = public.store().manifest().map_err(|e| DataFusionError::External(Box::new(e)))?;
    let mut out = Vec::new();
    for (i, meta) in manifest.tables.iter().enumerate() {
        let schema = meta.schema().map_err(|e| DataFusionError::External(Box::new(e)))?;
        out.push(Relation {
            oid: FIRST_USER_OID + i as i64,
            name: meta.name.clone(),
            namespace: PUBLIC_OID,
            kind: "r",
            columns: schema.fields().iter().map(|f| f.as_ref().clone()).collect(),
            rows: meta.rows as f32,
            bytes: meta.files.iter().map(|f| f.bytes).sum(),
        });
    }
    let mut session = public.session_tables();
    session.sort_by(|a, b| a.0.cmp(&b.0));
    for (i, (name, table)) in session.into_iter().enumerate() {
        out.push(Relation {
            oid: FIRST_USER_OID + (manifest.tables.len() + i) as i64,
            name,
            namespace: PUBLIC_OID,
            kind: if table.table_type() == TableType::View { "v" } else { "r" },
            columns: table.schema().fields().iter().map(|f| f.as_ref().clone()).collect(),
            rows: 0.0,
            bytes: 0,
        });
    }
    for def in DEFS {
        out.push(Relation {
            oid: def.oid,
            name: def.name.to_string(),
            namespace: PG_CATALOG_OID,
            // pg_roles is a view in PostgreSQL, the others tables.
            kind: if def.name == "pg_roles" { "v" } else { "r" },
            columns: def_schema(def).fields().iter().map(|f| f.as_ref().clone()).collect(),
            rows: 0.0,
            bytes: 0,
        });
    }
    Ok(out)
}

/// The rows of catalog table `def`.
fn rows(def: &'static Def, public: &StoreSchema) -> Result<Rows> {
    let mut rows = Rows::new(def);
    match def.name {
        "pg_namespace" => {
            for (oid, name) in [(PG_CATALOG_OID, PG_CATALOG), (PUBLIC_OID, SCHEMA), (INFORMATION_SCHEMA_OID, "information_schema")] {
                rows.row().set("oid", oid).set("nspname", name).set("nspowner", OWNER_OID);
            }
        }
        "pg_class" => {
            for r in relations(public)? {
                let table = r.kind == "r";
                rows.row()
                    .set("oid", r.oid)
                    .set("relname", r.name)
                    .set("relnamespace", r.namespace)
                    .set("relowner", OWNER_OID)
                    .set("relam", if table { TABLE_AM_OID } else { 0 })
                    .set("relpages", r.bytes.div_ceil(8192).min(i32::MAX as u64) as i64)
                    .set("reltuples", V::F(r.rows))
                    .set("relpersistence", "p")
                    .set("relkind", r.kind)
                    .set("relnatts", r.columns.len() as i64)
                    .set("relispopulated", true)
                    .set("relreplident", if table { "d" } else { "n" });
            }
        }
        "pg_attribute" => {
            for r in relations(public)? {
                for (i, f) in r.columns.iter().enumerate() {
                    let (oid, typmod) = pg_type(f.data_type());
                    let ty = type_by_oid(i64::from(oid));
                    rows.row()
                        .set("attrelid", r.oid)
                        .set("attname", f.name().as_str())
                        .set("atttypid", i64::from(oid))
                        .set("attlen", ty.map_or(-1, |t| i64::from(t.len)))
                        .set("attnum", i as i64 + 1)
                        .set("attcacheoff", -1)
                        .set("atttypmod", i64::from(typmod))
                        .set("attbyval", ty.is_some_and(|t| (1..=8).contains(&t.len)))
                        .set("attalign", "i")
                        .set("attstorage", if ty.is_some_and(|t| t.len > 0) { "p" } else { "x" })
                        .set("attnotnull", !f.is_nullable())
                        .set("attislocal", true)
                        .set("attstattarget", -1)
                        .set("attcollation", ty.map_or(0, |t| t.collation));
                }
            }
        }
        "pg_type" => {
            for ty in TYPES {
                rows.row()
                    .set("oid", i64::from(ty.oid))
                    .set("typname", ty.typname)
                    .set("typnamespace", PG_CATALOG_OID)
                    .set("typowner", OWNER_OID)
                    .set("typlen", i64::from(ty.len))
                    .set("typbyval", (1..=8).contains(&ty.len))
                    .set("typtype", "b")
                    .set("typcategory", ty.category.to_string())
                    .set("typisdefined", true)
                    .set("typdelim", ",")
                    .set("typsubscript", "-")
                    .set("typinput", format!("{}in", ty.typname))
                    .set("typoutput", format!("{}out", ty.typname))
                    .set("typreceive", format!("{}recv", ty.typname))
                    .set("typsend", format!("{}send", ty.typname))
                    .set("typmodin", "-")
                    .set("typmodout", "-")
                    .set("typanalyze", "-")
                    .set("typalign", "i")
                    .set("typstorage", if ty.len > 0 { "p" } else { "x" })
                    .set("typtypmod", -1)
                    .set("typcollation", ty.collation);
            }
        }
        "pg_am" => {
            rows.row().set("oid", TABLE_AM_OID).set("amname", "tessera").set("amhandler", "-").set("amtype", "t");
        }
        "pg_database" => {
            rows.row()
                .set("oid", DATABASE_OID)
                .set("datname", CATALOG)
                .set("datdba", OWNER_OID)
                .set("encoding", UTF8_ENCODING)
                .set("datlocprovider", "c")
                .set("datallowconn", true)
                .set("datconnlimit", -1)
                .set("dattablespace", 1663)
                .set("datcollate", "C")
                .set("datctype", "C");
        }
        "pg_collation" => {
            for (oid, name) in [(DEFAULT_COLLATION, "default"), (C_COLLATION, "C"), (951, "POSIX")] {
                let provider = if oid == DEFAULT_COLLATION { "d" } else { "c" };
                let locale = if oid == DEFAULT_COLLATION { V::Null } else { name.into() };
                rows.row()
                    .set("oid", oid)
                    .set("collname", name)
                    .set("collnamespace", PG_CATALOG_OID)
                    .set("collowner", OWNER_OID)
                    .set("collprovider", provider)
                    .set("collisdeterministic", true)
                    .set("collencoding", -1)
                    .set("collcollate", locale.clone())
                    .set("collctype", locale);
            }
        }
        "pg_tablespace" => {
            for (oid, name) in [(1663, "pg_default"), (1664, "pg_global")] {
                rows.row().set("oid", oid).set("spcname", name).set("spcowner", OWNER_OID);
            }
        }
        "pg_roles" => {
            rows.row()
                .set("rolname", OWNER)
                .set("rolsuper", true)
                .set("rolinherit", true)
                .set("rolcreaterole", true)
                .set("rolcreatedb", true)
                .set("rolcanlogin", true)
                .set("rolconnlimit", -1)
                .set("rolpassword", "********")
                .set("oid", OWNER_OID);
        }
        _ => {}
    }
    Ok(rows)
}

/// The `pg_catalog` schema of a session (see the module's documentation).
#[derive(Debug)]
pub struct PgCatalogSchema {
    public: Arc<StoreSchema>,
}

impl PgCatalogSchema {
    /// The catalogs of `public` (the store's tables and the session's own).
    pub fn new(public: Arc<StoreSchema>) -> Self {
        PgCatalogSchema { public }
    }
}

#[async_trait]
impl SchemaProvider for PgCatalogSchema {
    fn table_names(&self) -> Vec<String> {
        DEFS.iter().map(|d| d.name.to_string()).collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        Ok(def(name).map(|def| {
            Arc::new(CatalogTable { def, schema: def_schema(def), public: Arc::clone(&self.public) }) as Arc<dyn TableProvider>
        }))
    }

    fn table_exist(&self, name: &str) -> bool {
        def(name).is_some()
    }
}

/// One catalog table; its rows are built at each scan.
#[derive(Debug)]
struct CatalogTable {
    def: &'static Def,
    schema: SchemaRef,
    public: Arc<StoreSchema>,
}

impl std::fmt::Debug for Def {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

#[async_trait]
impl TableProvider for CatalogTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let batch = rows(self.def, &self.public)?.batch(&self.schema)?;
        Ok(MemorySourceConfig::try_new_exec(&[vec![batch]], Arc::clone(&self.schema), projection.cloned())?)
    }
}

// ---------------------------------------------------------------------------------
// Functions.

/// The body of a catalog function: its arguments (as many as the signature allows)
/// and the number of rows.
type Body = Arc<dyn Fn(&[ColumnarValue], usize) -> Result<ColumnarValue> + Send + Sync>;

/// A catalog function: PostgreSQL's name, a signature and a body.
struct PgFunction {
    name: &'static str,
    signature: Signature,
    returns: DataType,
    body: Body,
}

impl std::fmt::Debug for PgFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// A catalog function of `name`.
fn pg(
    name: &'static str,
    signature: Signature,
    returns: DataType,
    body: impl Fn(&[ColumnarValue], usize) -> Result<ColumnarValue> + Send + Sync + 'static,
) -> PgFunction {
    PgFunction { name, signature, returns, body: Arc::new(body) }
}

// Functions are told apart by name (one PgFunction per name).
impl PartialEq for PgFunction {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for PgFunction {}
impl Hash for PgFunction {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl ScalarUDFImpl for PgFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.returns.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        (self.body)(&args.args, args.number_rows)
    }
}

/// Each argument as an array of `rows` values.
fn arrays(args: &[ColumnarValue], rows: usize) -> Result<Vec<ArrayRef>> {
    args.iter().map(|a| a.to_array(rows)).collect()
}

/// Arguments of integer types (OIDs, type modifiers, encodings) as Int64 arrays.
fn int_args(args: &[ColumnarValue], rows: usize) -> Result<Vec<Int64Array>> {
    arrays(args, rows)?.iter().map(|a| Ok(cast(a, &DataType::Int64)?.as_primitive::<Int64Type>().clone())).collect()
}

fn text_result(values: impl Iterator<Item = Option<String>>) -> Result<ColumnarValue> {
    Ok(ColumnarValue::Array(Arc::new(values.collect::<StringArray>())))
}

fn format_type_body(args: &[ColumnarValue], rows: usize) -> Result<ColumnarValue> {
    let args = int_args(args, rows)?;
    let (oids, typmods) = (&args[0], &args[1]);
    text_result((0..oids.len()).map(|i| {
        oids.is_valid(i).then(|| format_type(oids.value(i), typmods.is_valid(i).then(|| typmods.value(i))))
    }))
}

fn encoding_body(args: &[ColumnarValue], rows: usize) -> Result<ColumnarValue> {
    let args = int_args(args, rows)?;
    let codes = &args[0];
    text_result((0..codes.len()).map(|i| codes.is_valid(i).then(|| if codes.value(i) == UTF8_ENCODING { "UTF8" } else { "" }.to_string())))
}

fn owner_body(args: &[ColumnarValue], rows: usize) -> Result<ColumnarValue> {
    let args = int_args(args, rows)?;
    let oids = &args[0];
    text_result((0..oids.len()).map(|i| oids.is_valid(i).then(|| OWNER.to_string())))
}

/// `pg_table_is_visible`: every relation is in `public` or `pg_catalog`, both on the
/// search path.
fn visible_body(args: &[ColumnarValue], rows: usize) -> Result<ColumnarValue> {
    let args = int_args(args, rows)?;
    let oids = &args[0];
    Ok(ColumnarValue::Array(Arc::new((0..oids.len()).map(|i| oids.is_valid(i).then_some(true)).collect::<BooleanArray>())))
}

fn null_text_body(_args: &[ColumnarValue], _rows: usize) -> Result<ColumnarValue> {
    Ok(ColumnarValue::Scalar(ScalarValue::Utf8(None)))
}

fn true_body(_args: &[ColumnarValue], _rows: usize) -> Result<ColumnarValue> {
    Ok(ColumnarValue::Scalar(ScalarValue::Boolean(Some(true))))
}

fn false_body(_args: &[ColumnarValue], _rows: usize) -> Result<ColumnarValue> {
    Ok(ColumnarValue::Scalar(ScalarValue::Boolean(Some(false))))
}

fn constant_text(value: &'static str) -> ColumnarValue {
    ColumnarValue::Scalar(ScalarValue::Utf8(Some(value.to_string())))
}

/// `array_to_string(array, delimiter [, null_string])` over lists (DataFusion's own is
/// in its nested-functions crate, which Tessera does not build); a text argument (the
/// catalogs' array columns, always NULL) is returned as it is.
fn array_to_string_body(args: &[ColumnarValue], rows: usize) -> Result<ColumnarValue> {
    let arrays = arrays(args, rows)?;
    let list = Arc::clone(&arrays[0]);
    let delimiter = cast(&arrays[1], &DataType::Utf8)?;
    let delimiter = delimiter.as_string::<i32>();
    let null_string = match arrays.get(2) {
        Some(a) => Some(cast(a, &DataType::Utf8)?),
        None => None,
    };
    let null_string = null_string.as_ref().map(|a| a.as_string::<i32>());
    match list.data_type() {
        DataType::List(_) => {
            let list = list.as_list::<i32>();
            let mut out = Vec::with_capacity(rows);
            for i in 0..list.len() {
                if list.is_null(i) || delimiter.is_null(i) {
                    out.push(None);
                    continue;
                }
                let values = cast(&list.value(i), &DataType::Utf8)?;
                let values = values.as_string::<i32>();
                let parts: Vec<&str> = (0..values.len())
                    .filter_map(|j| {
                        if values.is_valid(j) {
                            Some(values.value(j))
                        } else {
                            null_string.filter(|n| n.is_valid(i)).map(|n| n.value(i))
                        }
                    })
                    .collect();
                out.push(Some(parts.join(delimiter.value(i))));
            }
            text_result(out.into_iter())
        }
        DataType::Utf8 | DataType::Null => Ok(ColumnarValue::Array(cast(&list, &DataType::Utf8)?)),
        other => exec_err!("array_to_string: expected an array, got {other}"),
    }
}

/// PostgreSQL's `pg_size_pretty`: bytes below 10 kB, then the first of kB, MB, GB,
/// TB and PB to show the size as less than about 10240 of it (rounded half away from
/// zero).
pub fn size_pretty(bytes: i64) -> String {
    let half_rounded = |x: i64| (x + x.signum()) / 2;
    if bytes.abs() < 10 * 1024 {
        return format!("{bytes} bytes");
    }
    // Counted in half units from here on, so that the unit chosen can be rounded.
    let mut half = bytes / (1 << 9);
    for unit in ["kB", "MB", "GB", "TB"] {
        if half.abs() < 20 * 1024 - 1 {
            return format!("{} {unit}", half_rounded(half));
        }
        half /= 1 << 10;
    }
    format!("{} PB", half_rounded(half))
}

fn size_pretty_body(args: &[ColumnarValue], rows: usize) -> Result<ColumnarValue> {
    let args = int_args(args, rows)?;
    let sizes = &args[0];
    text_result((0..sizes.len()).map(|i| sizes.is_valid(i).then(|| size_pretty(sizes.value(i)))))
}

/// `pg_table_size(oid)` and its kin: the bytes of a store table's files (0 for views
/// and catalogs); `pg_database_size(…)`: of every table.
fn relation_size(name: &'static str, public: Arc<StoreSchema>) -> PgFunction {
    pg(name, Signature::variadic_any(Volatility::Volatile), DataType::Int64, move |args, rows| {
        let manifest = public.store().manifest().map_err(|e| DataFusionError::External(Box::new(e)))?;
        let bytes = |i: usize| manifest.tables.get(i).map_or(0, |t| t.files.iter().map(|f| f.bytes).sum::<u64>()) as i64;
        if name == "pg_database_size" {
            let total = (0..manifest.tables.len()).map(bytes).sum::<i64>();
            return Ok(ColumnarValue::Scalar(ScalarValue::Int64(Some(total))));
        }
        let oids = arrays(&args[..1], rows)?;
        let oids = cast(&oids[0], &DataType::Int64)?;
        let oids = oids.as_primitive::<Int64Type>();
        let sizes: Int64Array = oids
            .iter()
            .map(|oid| oid.map(|oid| usize::try_from(oid - FIRST_USER_OID).map_or(0, bytes)))
            .collect();
        Ok(ColumnarValue::Array(Arc::new(sizes)))
    })
}

/// Registers the catalog functions on `ctx`: the PostgreSQL functions psql and drivers
/// call in their catalog queries, each under its own name (the `pg_catalog.` prefix
/// they are called with is removed by [`crate::pg_compat`]). Relation sizes are read
/// from `public`'s store.
pub fn register_functions(ctx: &SessionContext, public: &Arc<StoreSchema>) {
    for name in ["pg_table_size", "pg_relation_size", "pg_total_relation_size", "pg_indexes_size", "pg_database_size"] {
        ctx.register_udf(ScalarUDF::new_from_impl(relation_size(name, Arc::clone(public))));
    }
    let oid = || Signature::exact(vec![DataType::Int64], Volatility::Stable);
    let any = || Signature::variadic_any(Volatility::Stable);
    let functions = [
        pg("format_type", Signature::exact(vec![DataType::Int64, DataType::Int64], Volatility::Immutable), DataType::Utf8, format_type_body),
        pg("pg_get_userbyid", oid(), DataType::Utf8, owner_body),
        pg("pg_table_is_visible", oid(), DataType::Boolean, visible_body),
        pg("pg_type_is_visible", oid(), DataType::Boolean, visible_body),
        pg("pg_encoding_to_char", Signature::exact(vec![DataType::Int64], Volatility::Immutable), DataType::Utf8, encoding_body),
        pg(
            "array_to_string",
            Signature::one_of(vec![TypeSignature::Any(2), TypeSignature::Any(3)], Volatility::Immutable),
            DataType::Utf8,
            array_to_string_body,
        ),
        pg("current_database", Signature::nullary(Volatility::Stable), DataType::Utf8, |_, _| Ok(constant_text(CATALOG))),
        pg("current_schema", Signature::nullary(Volatility::Stable), DataType::Utf8, |_, _| Ok(constant_text(SCHEMA))),
        // Descriptions, definitions and defaults Tessera's objects do not have: NULL.
        pg("pg_get_expr", any(), DataType::Utf8, null_text_body),
        pg("obj_description", any(), DataType::Utf8, null_text_body),
        pg("col_description", any(), DataType::Utf8, null_text_body),
        pg("shobj_description", any(), DataType::Utf8, null_text_body),
        pg("pg_get_indexdef", any(), DataType::Utf8, null_text_body),
        pg("pg_get_constraintdef", any(), DataType::Utf8, null_text_body),
        pg("pg_get_viewdef", any(), DataType::Utf8, null_text_body),
        pg("pg_get_triggerdef", any(), DataType::Utf8, null_text_body),
        pg("pg_get_partkeydef", any(), DataType::Utf8, null_text_body),
        pg("pg_size_pretty", Signature::exact(vec![DataType::Int64], Volatility::Immutable), DataType::Utf8, size_pretty_body),
        pg("pg_get_statisticsobjdef_columns", any(), DataType::Utf8, null_text_body),
        pg("pg_relation_is_publishable", any(), DataType::Boolean, false_body),
        // One role owns everything and may do anything.
        pg("has_table_privilege", any(), DataType::Boolean, true_body),
        pg("has_schema_privilege", any(), DataType::Boolean, true_body),
        pg("has_database_privilege", any(), DataType::Boolean, true_body),
    ];
    for f in functions {
        ctx.register_udf(ScalarUDF::new_from_impl(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_type_names_types_as_postgresql() {
        assert_eq!(format_type(23, Some(-1)), "integer");
        assert_eq!(format_type(20, None), "bigint");
        assert_eq!(format_type(1700, Some(((12 << 16) | 2) + 4)), "numeric(12,2)");
        assert_eq!(format_type(1700, Some(-1)), "numeric");
        assert_eq!(format_type(1043, Some(24)), "character varying(20)");
        assert_eq!(format_type(1043, None), "character varying");
        assert_eq!(format_type(25, Some(-1)), "text");
        assert_eq!(format_type(1082, Some(-1)), "date");
        assert_eq!(format_type(1114, Some(-1)), "timestamp without time zone");
        assert_eq!(format_type(1184, Some(3)), "timestamp(3) with time zone");
        assert_eq!(format_type(701, Some(-1)), "double precision");
        assert_eq!(format_type(1042, Some(-1)), "bpchar");
        assert_eq!(format_type(1042, None), "character");
        assert_eq!(format_type(999_999, Some(-1)), "???");
    }

    #[test]
    fn sizes_print_as_postgresql_prints_them() {
        assert_eq!(size_pretty(0), "0 bytes");
        assert_eq!(size_pretty(10 * 1024 - 1), "10239 bytes");
        assert_eq!(size_pretty(10 * 1024), "10 kB");
        assert_eq!(size_pretty(1536 * 1024), "1536 kB");
        assert_eq!(size_pretty(10 * 1024 * 1024 - 513), "10239 kB");
        assert_eq!(size_pretty(10 * 1024 * 1024), "10 MB");
        assert_eq!(size_pretty(20 * 1024 * 1024), "20 MB");
        assert_eq!(size_pretty(-20 * 1024 * 1024), "-20 MB");
        assert_eq!(size_pretty(3 << 30), "3072 MB");
        assert_eq!(size_pretty(1 << 50), "1024 TB");
        assert_eq!(size_pretty(i64::MAX), "8192 PB");
    }

    #[test]
    fn arrow_types_map_to_postgresql_types() {
        use datafusion::arrow::datatypes::TimeUnit;
        let name = |dt: DataType| {
            let (oid, typmod) = pg_type(&dt);
            format_type(i64::from(oid), Some(i64::from(typmod)))
        };
        assert_eq!(name(DataType::Int32), "integer");
        assert_eq!(name(DataType::Int64), "bigint");
        assert_eq!(name(DataType::Int16), "smallint");
        assert_eq!(name(DataType::Boolean), "boolean");
        assert_eq!(name(DataType::Decimal128(12, 2)), "numeric(12,2)");
        assert_eq!(name(DataType::Float32), "real");
        assert_eq!(name(DataType::Float64), "double precision");
        assert_eq!(name(DataType::Utf8), "text");
        assert_eq!(name(DataType::Date32), "date");
        assert_eq!(name(DataType::Timestamp(TimeUnit::Microsecond, None)), "timestamp without time zone");
        assert_eq!(name(DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))), "timestamp with time zone");
        assert_eq!(name(DataType::Binary), "bytea");
        assert_eq!(name(DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))), "text");
        assert_eq!(pg_type(&DataType::Decimal128(12, 2)), (1700, ((12 << 16) | 2) + 4));
        // Every type a column maps to is listed in pg_type.
        for dt in [DataType::Boolean, DataType::UInt64, DataType::Binary, DataType::Float16, DataType::Interval(datafusion::arrow::datatypes::IntervalUnit::DayTime)] {
            assert!(type_by_oid(i64::from(pg_type(&dt).0)).is_some(), "{dt}");
        }
    }

    #[test]
    fn catalogs_said_empty_are() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Arc::new(tessera_storage::Store::open(dir.path()).expect("store"));
        let public = StoreSchema::new(store);
        for def in DEFS {
            let n = rows(def, &public).map(|r| r.rows.len()).expect("rows");
            assert_eq!(n == 0, is_always_empty(def.name), "{}", def.name);
        }
    }

    /// Runs `sql` in `session` and prints its rows as a table.
    async fn table(session: &crate::Session, sql: &str) -> String {
        let out = session.execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        datafusion::arrow::util::pretty::pretty_format_batches(&out.batches).map(|t| t.to_string()).unwrap_or_default()
    }

    #[test]
    fn catalog_queries_through_a_session() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            let session = crate::Session::open(dir.path()).expect("session");
            session.sql("CREATE TABLE other (x INT); CREATE TABLE t (a INT NOT NULL, b DECIMAL(12,2), c VARCHAR)").await.expect("tables");
            session.sql("CREATE VIEW v AS SELECT a FROM t").await.expect("view");
            assert_eq!(
                table(&session, "SELECT c.oid, c.relname, c.relkind, c.relnatts FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY 1").await,
                "+-------+---------+---------+----------+\n\
                 | oid   | relname | relkind | relnatts |\n\
                 +-------+---------+---------+----------+\n\
                 | 16384 | other   | r       | 1        |\n\
                 | 16385 | t       | r       | 3        |\n\
                 | 16386 | v       | v       | 1        |\n\
                 +-------+---------+---------+----------+"
            );
            // A name cast to regclass is looked up; psql's column query with its
            // correlated subqueries plans.
            assert_eq!(
                table(&session, "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull, \
                    (SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type t \
                     WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> t.typcollation) AS coll, \
                    (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true) FROM pg_catalog.pg_attrdef d \
                     WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef) AS def \
                    FROM pg_attribute a WHERE a.attrelid = 't'::regclass AND a.attnum > 0 ORDER BY a.attnum").await,
                "+---------+---------------+------------+------+-----+\n\
                 | attname | type          | attnotnull | coll | def |\n\
                 +---------+---------------+------------+------+-----+\n\
                 | a       | integer       | true       |      |     |\n\
                 | b       | numeric(12,2) | false      |      |     |\n\
                 | c       | text          | false      |      |     |\n\
                 +---------+---------------+------------+------+-----+"
            );
            // Unplannable, but over an always-empty catalog: no rows, its columns.
            let policies = "SELECT pol.polname, pg_catalog.array_to_string(array(select rolname from pg_catalog.pg_roles where oid = any (pol.polroles) order by 1),',') AS roles FROM pg_catalog.pg_policy pol WHERE pol.polrelid = '16385'";
            let out = session.execute(policies).await.expect("policies");
            assert_eq!((out.num_rows(), out.schema.fields().len()), (0, 2));
            // Aggregates over it have their row; unplannable queries of other catalogs fail.
            assert!(table(&session, "SELECT count(*) AS n FROM pg_catalog.pg_policy").await.contains("| 0 |"));
            assert!(session.execute("SELECT array(select relname from pg_catalog.pg_class where oid = any (c.relacl)) FROM pg_catalog.pg_class c").await.is_err());
            // Sizes, and the mapping of types the wire protocol uses.
            assert!(table(&session, "SELECT pg_catalog.pg_size_pretty(pg_catalog.pg_table_size(c.oid)) AS s FROM pg_class c WHERE relname = 't'").await.contains("| 0 bytes |"));
        });
    }

    #[test]
    fn catalog_tables_have_their_columns() {
        for def in DEFS {
            let mut rows = Rows::new(def);
            rows.row();
            assert_eq!(rows.batch(&def_schema(def)).map(|b| b.num_columns()).ok(), Some(def.columns.len()), "{}", def.name);
        }
    }
}
