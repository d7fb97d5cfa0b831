//! PostgreSQL-only spellings in statements, rewritten into SQL DataFusion plans.
//!
//! Clients of the PostgreSQL protocol (psql's `\d` commands, drivers' metadata calls)
//! send catalog queries written for PostgreSQL itself. [`rewrite`] runs over a parsed
//! statement before it is planned and changes only these spellings, leaving any other
//! SQL as it was:
//!
//! - `OPERATOR(pg_catalog.~)`: a schema-qualified operator becomes the operator itself.
//! - `expr COLLATE pg_catalog.default` (or `"C"`, `"POSIX"`): dropped, since Tessera
//!   compares text byte by byte, which is what these collations do. Other collations
//!   are left for the planner to refuse.
//! - `pg_catalog.f(…)`: the schema prefix of a function call is removed (DataFusion
//!   looks functions up by their plain name; the catalog functions are registered by
//!   [`crate::pg_catalog::register_functions`]).
//! - Casts to PostgreSQL's OID types (`::regclass`, `::regtype`, `::oid`, …): OIDs are
//!   `BIGINT` in the catalogs, so a number cast to one stays that number; a name
//!   (`'t'::regclass`, `'int4'::regtype`, or a placeholder `$1::regclass`) becomes a
//!   lookup of its OID in `pg_class`, `pg_type` or `pg_namespace`;
//!   `x::regtype::text` becomes `format_type(x, NULL)`,
//!   the type's name. (A bare `x::regclass` shows the OID, not the name as PostgreSQL
//!   would.)
//! - Casts to `pg_catalog.`-qualified types (`::pg_catalog.text`, `::pg_catalog.int4`)
//!   become casts to the SQL type, and `name`, `"char"` and `bpchar` are text.
//! - An unqualified `FROM pg_class` (any table of `pg_catalog`) reads
//!   `pg_catalog.pg_class`, as PostgreSQL's search path puts `pg_catalog` first.
//!
//! In catalog queries only (statements reading `pg_catalog`), a one-value scalar
//! subquery is aggregated so that DataFusion can plan it when correlated, and an
//! `ARRAY(subquery)` known to have no rows is NULL, the catalogs' empty array (see
//! `CatalogQuery`).
//!
//! `E'…'` strings need nothing: DataFusion's parser reads them already.
//!
//! Some catalog queries use what DataFusion cannot plan at all (arrays built from
//! subqueries, `= ANY(array)`): psql's footers of `\d TABLE` over policies,
//! publications, statistics objects. When such a query reads a catalog that is always
//! empty in Tessera in a way that makes its result empty, [`empty_catalog_answer`]
//! says so, and the session answers it with no rows instead of an error.

use std::ops::ControlFlow;

use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    self, BinaryOperator, DataType, Expr, FunctionArguments, Ident, ObjectName, ObjectNamePart, TableFactor, Value,
    VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

use crate::pg_catalog::PG_CATALOG;

/// Rewrites the PostgreSQL-only spellings of `statement` (see the module's
/// documentation); statements without them are left unchanged.
pub fn rewrite(statement: &mut DFStatement) {
    match statement {
        DFStatement::Statement(s) => {
            let _ = s.visit(&mut PgSpellings);
            if reads_pg_catalog(s) {
                let _ = s.visit(&mut CatalogQuery);
            }
        }
        DFStatement::Explain(explain) => rewrite(&mut explain.statement),
        _ => {}
    }
}

/// For a catalog query whose result is empty whatever its expressions compute — every
/// branch reads, other than through an outer join's optional side, a catalog
/// Tessera never has rows in (`pg_policy`, `pg_publication`, …) — the names of its
/// columns (aliases, else the expressions' text). None for any other statement, and
/// for one aggregating without GROUP BY (one row even over no rows).
pub fn empty_catalog_answer(statement: &DFStatement) -> Option<Vec<String>> {
    let DFStatement::Statement(s) = statement else { return None };
    let ast::Statement::Query(query) = s.as_ref() else { return None };
    if !is_empty_query(query) {
        return None;
    }
    let mut body = query.body.as_ref();
    loop {
        match body {
            ast::SetExpr::SetOperation { left, .. } => body = left,
            ast::SetExpr::Query(q) => body = &q.body,
            ast::SetExpr::Select(select) => {
                let mut names: Vec<String> = Vec::new();
                for item in &select.projection {
                    let name = match item {
                        ast::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                        ast::SelectItem::UnnamedExpr(Expr::Identifier(i)) => i.value.clone(),
                        ast::SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => parts.last()?.value.clone(),
                        ast::SelectItem::UnnamedExpr(Expr::Function(f)) => f.name.0.last()?.to_string(),
                        ast::SelectItem::UnnamedExpr(_) => "?column?".to_string(),
                        _ => return None,
                    };
                    // Names must differ (PostgreSQL repeats them; DataFusion does not).
                    let mut unique = name.clone();
                    let mut n = 1;
                    while names.contains(&unique) {
                        n += 1;
                        unique = format!("{name}_{n}");
                    }
                    names.push(unique);
                }
                return Some(names);
            }
            _ => return None,
        }
    }
}

// ---------------------------------------------------------------------------------
// PostgreSQL's spellings.

/// The rewrites of PostgreSQL's spellings, in any statement.
struct PgSpellings;

impl VisitorMut for PgSpellings {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, args, .. } = factor {
            match (name.0.as_slice(), args.is_some()) {
                // `FROM pg_class`: the catalog.
                ([ObjectNamePart::Identifier(table)], false) if crate::pg_catalog::is_catalog_table(&table.value.to_ascii_lowercase()) => {
                    *name = ObjectName(vec![ident(PG_CATALOG), ObjectNamePart::Identifier(table.clone())]);
                }
                // `FROM pg_catalog.unnest(…)`: a table function, by its plain name.
                ([ObjectNamePart::Identifier(schema), f], true) if schema.value.eq_ignore_ascii_case(PG_CATALOG) => {
                    *name = ObjectName(vec![f.clone()]);
                }
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        // `x::regtype::text`: the type's name (the inner cast alone would be its OID).
        if let Expr::Cast { expr: inner, data_type, .. } = expr
            && is_text(data_type)
            && let Expr::Cast { expr: x, data_type: inner_type, .. } = inner.as_mut()
            && pg_type_name(inner_type).as_deref() == Some("regtype")
            && !matches!(x.as_ref(), Expr::Value(_))
        {
            *expr = function("format_type", vec![take(x), Expr::value(Value::Null)]);
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        match expr {
            Expr::BinaryOp { op, .. } => {
                if let BinaryOperator::PGCustomBinaryOperator(parts) = op
                    && let Some(plain) = qualified_operator(parts)
                {
                    *op = plain;
                }
            }
            Expr::Collate { expr: inner, collation } if is_bytewise_collation(collation) => *expr = take(inner),
            Expr::Function(f) => {
                if let [ObjectNamePart::Identifier(schema), name] = f.name.0.as_slice()
                    && schema.value.eq_ignore_ascii_case(PG_CATALOG)
                {
                    f.name = ObjectName(vec![name.clone()]);
                }
            }
            Expr::Cast { expr: inner, data_type, .. } => {
                if let Some(name) = pg_type_name(data_type) {
                    if let Some(lookup) = oid_lookup(&name, inner) {
                        *expr = lookup;
                    } else if let Some(sql_type) = sql_type(&name) {
                        *data_type = sql_type;
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The operator of `OPERATOR(pg_catalog.op)` (or `OPERATOR(op)`), for the operators
/// DataFusion has.
fn qualified_operator(parts: &[String]) -> Option<BinaryOperator> {
    let op = match parts {
        [op] => op,
        [schema, op] if schema.eq_ignore_ascii_case(PG_CATALOG) => op,
        _ => return None,
    };
    Some(match op.as_str() {
        "~" => BinaryOperator::PGRegexMatch,
        "~*" => BinaryOperator::PGRegexIMatch,
        "!~" => BinaryOperator::PGRegexNotMatch,
        "!~*" => BinaryOperator::PGRegexNotIMatch,
        "~~" => BinaryOperator::PGLikeMatch,
        "~~*" => BinaryOperator::PGILikeMatch,
        "!~~" => BinaryOperator::PGNotLikeMatch,
        "!~~*" => BinaryOperator::PGNotILikeMatch,
        "=" => BinaryOperator::Eq,
        "<>" | "!=" => BinaryOperator::NotEq,
        "<" => BinaryOperator::Lt,
        "<=" => BinaryOperator::LtEq,
        ">" => BinaryOperator::Gt,
        ">=" => BinaryOperator::GtEq,
        "+" => BinaryOperator::Plus,
        "-" => BinaryOperator::Minus,
        "*" => BinaryOperator::Multiply,
        "/" => BinaryOperator::Divide,
        "%" => BinaryOperator::Modulo,
        "||" => BinaryOperator::StringConcat,
        _ => return None,
    })
}

/// Whether a collation orders text byte by byte, as Tessera always does: the
/// database's default (C here), "C" and "POSIX", qualified with pg_catalog or not.
fn is_bytewise_collation(name: &ObjectName) -> bool {
    let parts: Vec<&str> = name
        .0
        .iter()
        .filter_map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(i.value.as_str()),
            _ => None,
        })
        .collect();
    let last = match parts.as_slice() {
        [c] => *c,
        [schema, c] if schema.eq_ignore_ascii_case(PG_CATALOG) => *c,
        _ => return false,
    };
    last.eq_ignore_ascii_case("default") || last == "C" || last == "POSIX"
}

/// The PostgreSQL name of a type DataFusion does not know: `regclass`, or a type
/// written with the `pg_catalog.` prefix or as a name DataFusion lacks (`oid`,
/// `name`, `"char"`, …), in lower case.
fn pg_type_name(data_type: &DataType) -> Option<String> {
    match data_type {
        DataType::Regclass => Some("regclass".into()),
        DataType::Custom(name, modifiers) if modifiers.is_empty() => match name.0.as_slice() {
            [ObjectNamePart::Identifier(t)] => Some(t.value.to_ascii_lowercase()),
            [ObjectNamePart::Identifier(s), ObjectNamePart::Identifier(t)] if s.value.eq_ignore_ascii_case(PG_CATALOG) => {
                Some(t.value.to_ascii_lowercase())
            }
            _ => None,
        },
        _ => None,
    }
}

fn is_text(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Text | DataType::Varchar(None) | DataType::String(None))
        || pg_type_name(data_type).is_some_and(|n| sql_type(&n) == Some(DataType::Text))
}

/// PostgreSQL's OID types: references to catalog rows, `BIGINT` in Tessera's catalogs.
fn is_oid_type(name: &str) -> bool {
    matches!(
        name,
        "oid" | "regclass" | "regtype" | "regproc" | "regprocedure" | "regnamespace" | "regrole" | "regoper"
            | "regoperator" | "regconfig" | "regdictionary" | "xid" | "cid"
    )
}

/// The SQL type a PostgreSQL type name is planned as.
fn sql_type(name: &str) -> Option<DataType> {
    use ast::{ExactNumberInfo, TimezoneInfo};
    Some(match name {
        n if is_oid_type(n) => DataType::BigInt(None),
        "text" | "name" | "char" | "bpchar" | "varchar" => DataType::Text,
        "int2" | "smallint" => DataType::SmallInt(None),
        "int4" | "integer" | "int" => DataType::Int(None),
        "int8" | "bigint" => DataType::BigInt(None),
        "float4" | "real" => DataType::Real,
        "float8" => DataType::DoublePrecision,
        "bool" | "boolean" => DataType::Boolean,
        "numeric" => DataType::Numeric(ExactNumberInfo::None),
        "date" => DataType::Date,
        "timestamp" => DataType::Timestamp(None, TimezoneInfo::None),
        "timestamptz" => DataType::Timestamp(None, TimezoneInfo::Tz),
        "bytea" => DataType::Bytea,
        _ => return None,
    })
}

/// A name cast to an OID type (`'t'::regclass`): a lookup of its OID. Numbers and
/// other expressions are not lookups (None): they are cast to BIGINT. A placeholder
/// (`$1::regclass`, as drivers send names) is looked up as an OID, a name or a
/// `schema.name` (written as stored: no quotes, no case folding).
fn oid_lookup(type_name: &str, value: &Expr) -> Option<Expr> {
    let Expr::Value(v) = value else { return None };
    if let Value::Placeholder(p) = &v.value {
        let sql = match type_name {
            "regclass" => format!(
                "(SELECT max(c.oid) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                 WHERE CAST(c.oid AS TEXT) = {p} OR c.relname = {p} OR n.nspname || '.' || c.relname = {p})"
            ),
            "regtype" => format!(
                "(SELECT max(oid) FROM pg_catalog.pg_type WHERE CAST(oid AS TEXT) = {p} OR typname = {p} OR format_type(oid, NULL) = {p})"
            ),
            _ => return None,
        };
        return Parser::new(&PostgreSqlDialect {}).try_with_sql(&sql).ok()?.parse_expr().ok();
    }
    let (Value::SingleQuotedString(text) | Value::EscapedStringLiteral(text)) = &v.value else { return None };
    if text.trim().parse::<i64>().is_ok() {
        return None;
    }
    let (schema, name) = match text.rsplit_once('.') {
        Some((s, n)) => (Some(unquote_ident(s)), unquote_ident(n)),
        None => (None, unquote_ident(text)),
    };
    let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let in_schema = |column: &str| match &schema {
        Some(s) => format!(" AND {column} = (SELECT max(oid) FROM pg_catalog.pg_namespace WHERE nspname = {})", quote(s)),
        None => String::new(),
    };
    let sql = match type_name {
        "regclass" => format!("(SELECT max(oid) FROM pg_catalog.pg_class WHERE relname = {}{})", quote(&name), in_schema("relnamespace")),
        "regtype" => format!("(SELECT max(oid) FROM pg_catalog.pg_type WHERE typname = {}{})", quote(&name), in_schema("typnamespace")),
        "regnamespace" => format!("(SELECT max(oid) FROM pg_catalog.pg_namespace WHERE nspname = {})", quote(&name)),
        _ => return None,
    };
    Parser::new(&PostgreSqlDialect {}).try_with_sql(&sql).ok()?.parse_expr().ok()
}

/// An identifier as PostgreSQL reads it: unquoted names fold to lower case.
fn unquote_ident(s: &str) -> String {
    let s = s.trim();
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(quoted) => quoted.replace("\"\"", "\""),
        None => s.to_ascii_lowercase(),
    }
}

// ---------------------------------------------------------------------------------
// Catalog queries: one-value subqueries aggregated, empty arrays.

/// Whether a statement reads a table of `pg_catalog` (a catalog query).
fn reads_pg_catalog(statement: &ast::Statement) -> bool {
    ast::visit_relations(statement, |name| {
        let parts = &name.0;
        match parts.len().checked_sub(2).and_then(|i| parts.get(i)) {
            Some(ObjectNamePart::Identifier(schema)) if schema.value.eq_ignore_ascii_case(PG_CATALOG) => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    })
    .is_break()
}

/// The rewrite of catalog queries only: a scalar subquery selecting one value with no
/// aggregate (`(SELECT c.collname FROM pg_collation c WHERE c.oid = a.attcollation)`)
/// takes `max` of it. DataFusion plans a correlated scalar subquery only when it is
/// aggregated; the catalogs' keys make these return at most one row, where `max` is
/// that row's value. (PostgreSQL would raise an error for more than one row; user
/// queries keep that check, as DataFusion refuses them unaggregated.)
struct CatalogQuery;

impl VisitorMut for CatalogQuery {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        // `ARRAY(subquery)` of no rows: the empty array, NULL as the catalogs' arrays.
        if let Expr::Function(f) = expr
            && let FunctionArguments::Subquery(query) = &f.args
            && f.name.to_string().eq_ignore_ascii_case("array")
            && is_empty_query(query)
        {
            *expr = Expr::value(Value::Null);
        } else if let Expr::Subquery(query) = expr
            && let Some(condition) = and(aggregate_single_value(query))
        {
            // Conditions on outer columns only, taken out of the subquery: it runs when
            // they hold (NULL otherwise, as `max` of no rows).
            let subquery = take(expr);
            *expr = Expr::Case {
                case_token: AttachedToken::empty(),
                end_token: AttachedToken::empty(),
                operand: None,
                conditions: vec![ast::CaseWhen { condition, result: subquery }],
                else_result: None,
            };
        }
        ControlFlow::Continue(())
    }
}

/// Aggregate functions, by name, that keep a subquery's value from being wrapped.
const AGGREGATES: &[&str] = &[
    "max", "min", "count", "sum", "avg", "array_agg", "string_agg", "bool_and", "bool_or", "every", "first_value",
    "last_value",
];

/// Wraps the value of a one-value subquery in `max` (see [`CatalogQuery`]) and
/// returns the conditions on outer columns only it took out of the subquery's WHERE
/// (see [`decorrelate_filter`]), for the subquery to run under.
fn aggregate_single_value(query: &mut ast::Query) -> Vec<Expr> {
    if query.with.is_some() || query.limit_clause.is_some() || query.fetch.is_some() {
        return Vec::new();
    }
    let ast::SetExpr::Select(select) = query.body.as_mut() else { return Vec::new() };
    let ungrouped = matches!(&select.group_by, ast::GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
    if select.distinct.is_some() || select.having.is_some() || !ungrouped {
        return Vec::new();
    }
    let [item] = select.projection.as_mut_slice() else { return Vec::new() };
    let (ast::SelectItem::UnnamedExpr(value) | ast::SelectItem::ExprWithAlias { expr: value, .. }) = item else {
        return Vec::new();
    };
    if has_aggregate(value) {
        return Vec::new();
    }
    *value = function("max", vec![take(value)]);
    decorrelate_filter(select)
}

/// `(SELECT max(…) …)` made for a subquery whose WHERE compares inner and outer
/// columns other than by `inner = outer`, which DataFusion cannot plan:
/// - an outer column equal to an inner expression (`c.oid = a.attcollation`) is
///   replaced by that expression in the other conditions (`a.attcollation <>
///   t.typcollation` becomes `c.oid <> t.typcollation`);
/// - conditions on outer columns only (`AND a.atthasdef`) are returned, for the
///   subquery to run only when they hold (`max` of no rows is NULL, as when the
///   conditions fail).
///
/// Columns are told apart by their qualifiers: those of the subquery's FROM are
/// inner, other qualifiers outer; conditions with unqualified columns or subqueries
/// are left where they are.
fn decorrelate_filter(select: &mut ast::Select) -> Vec<Expr> {
    let Some(selection) = select.selection.take() else { return Vec::new() };
    let inner = from_names(select);
    let mut conditions = Vec::new();
    conjuncts(selection, &mut conditions);
    // Outer columns known equal to expressions of inner columns.
    let mut equal: Vec<(String, Expr)> = Vec::new();
    for c in &conditions {
        if let Expr::BinaryOp { left, op: BinaryOperator::Eq, right } = c {
            for (a, b) in [(left, right), (right, left)] {
                if let Some(outer) = outer_column(a, &inner)
                    && columns(b, &inner) == Some(Side::Inner)
                {
                    equal.push((outer, b.as_ref().clone()));
                }
            }
        }
    }
    let (mut kept, mut hoisted) = (Vec::new(), Vec::new());
    for mut c in conditions {
        let is_key = equal.iter().any(|(outer, e)| is_equality(&c, outer, e, &inner));
        if !is_key && columns(&c, &inner).is_some() {
            let _ = ast::visit_expressions_mut(&mut c, |e| {
                if let Some(outer) = outer_column(e, &inner)
                    && let Some((_, replacement)) = equal.iter().find(|(o, _)| *o == outer)
                {
                    *e = replacement.clone();
                }
                ControlFlow::<()>::Continue(())
            });
        }
        if !is_key && columns(&c, &inner) == Some(Side::Outer) {
            hoisted.push(c);
        } else {
            kept.push(c);
        }
    }
    select.selection = and(kept);
    hoisted
}

/// The names the FROM clause of `select` gives its relations (aliases, else table
/// names), in lower case.
fn from_names(select: &ast::Select) -> Vec<String> {
    let name = |f: &TableFactor| -> Option<String> {
        let alias = match f {
            TableFactor::Table { alias, name, .. } => {
                return Some(match alias {
                    Some(a) => a.name.value.to_ascii_lowercase(),
                    None => match name.0.last() {
                        Some(ObjectNamePart::Identifier(i)) => i.value.to_ascii_lowercase(),
                        _ => return None,
                    },
                });
            }
            TableFactor::Derived { alias, .. } | TableFactor::TableFunction { alias, .. } | TableFactor::UNNEST { alias, .. } => alias,
            _ => return None,
        };
        alias.as_ref().map(|a| a.name.value.to_ascii_lowercase())
    };
    select
        .from
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)))
        .filter_map(name)
        .collect()
}

fn conjuncts(expr: Expr, out: &mut Vec<Expr>) {
    match expr {
        Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            conjuncts(*left, out);
            conjuncts(*right, out);
        }
        Expr::Nested(inner) if matches!(inner.as_ref(), Expr::BinaryOp { op: BinaryOperator::And, .. }) => conjuncts(*inner, out),
        other => out.push(other),
    }
}

fn and(conditions: Vec<Expr>) -> Option<Expr> {
    conditions.into_iter().reduce(|a, b| Expr::BinaryOp { left: Box::new(a), op: BinaryOperator::And, right: Box::new(b) })
}

/// `qualifier.column` of a relation not in `inner`, in lower case.
fn outer_column(expr: &Expr, inner: &[String]) -> Option<String> {
    let Expr::CompoundIdentifier(parts) = expr else { return None };
    let [.., qualifier, column] = parts.as_slice() else { return None };
    let qualifier = qualifier.value.to_ascii_lowercase();
    (!inner.contains(&qualifier)).then(|| format!("{qualifier}.{}", column.value.to_ascii_lowercase()))
}

/// Which columns an expression reads.
#[derive(Debug, PartialEq)]
enum Side {
    /// None (constants only).
    Neither,
    Inner,
    Outer,
    Both,
}

/// The columns `expr` reads (None: some cannot be told apart, or it has a subquery).
fn columns(expr: &Expr, inner: &[String]) -> Option<Side> {
    let (mut outer, mut inside, mut unknown) = (false, false, false);
    let _ = ast::visit_expressions(expr, |e| {
        match e {
            Expr::CompoundIdentifier(_) if outer_column(e, inner).is_some() => outer = true,
            Expr::CompoundIdentifier(_) => inside = true,
            Expr::Identifier(_) | Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => unknown = true,
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    match (unknown, outer, inside) {
        (true, ..) => None,
        (false, true, true) => Some(Side::Both),
        (false, true, false) => Some(Side::Outer),
        (false, false, true) => Some(Side::Inner),
        (false, false, false) => Some(Side::Neither),
    }
}

/// Whether `condition` is the equality `outer = expr` (either way round).
fn is_equality(condition: &Expr, outer: &str, expr: &Expr, inner: &[String]) -> bool {
    let Expr::BinaryOp { left, op: BinaryOperator::Eq, right } = condition else { return false };
    let is = |a: &Expr, b: &Expr| outer_column(a, inner).as_deref() == Some(outer) && b == expr;
    is(left, right) || is(right, left)
}

// ---------------------------------------------------------------------------------
// Queries known to have no rows.

fn is_empty_query(query: &ast::Query) -> bool {
    query.with.is_none() && is_empty_set(&query.body)
}

fn is_empty_set(body: &ast::SetExpr) -> bool {
    match body {
        ast::SetExpr::Query(q) => is_empty_query(q),
        ast::SetExpr::SetOperation { op, left, right, .. } => match op {
            ast::SetOperator::Union => is_empty_set(left) && is_empty_set(right),
            ast::SetOperator::Intersect => is_empty_set(left) || is_empty_set(right),
            ast::SetOperator::Except | ast::SetOperator::Minus => is_empty_set(left),
        },
        ast::SetExpr::Select(select) => {
            let grouped = !matches!(&select.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty());
            let aggregates = select.projection.iter().any(|item| match item {
                ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => has_aggregate(e),
                _ => false,
            });
            (grouped || !aggregates && select.having.is_none()) && select.from.iter().any(is_empty_from)
        }
        _ => false,
    }
}

/// Whether a FROM item has no rows: its first relation is empty and no later join
/// keeps the other side's rows, or a later inner join is with an empty relation. Empty
/// relations are the always-empty catalogs, and `unnest` of a catalog's array column
/// (always NULL).
fn is_empty_from(from: &ast::TableWithJoins) -> bool {
    use ast::JoinOperator as J;
    let empty = |f: &TableFactor| match f {
        TableFactor::Table { name, args: None, .. } => match name.0.as_slice() {
            [ObjectNamePart::Identifier(schema), ObjectNamePart::Identifier(table)] => {
                schema.value.eq_ignore_ascii_case(PG_CATALOG) && crate::pg_catalog::is_always_empty(&table.value)
            }
            _ => false,
        },
        TableFactor::Table { name, args: Some(args), .. } => match (name.0.as_slice(), args.args.as_slice()) {
            (
                [ObjectNamePart::Identifier(f)],
                [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(Expr::CompoundIdentifier(column)))],
            ) => {
                f.value.eq_ignore_ascii_case("unnest")
                    && column.last().is_some_and(|c| crate::pg_catalog::is_array_column(&c.value))
            }
            _ => false,
        },
        _ => false,
    };
    let keeps_right = |op: &J| matches!(op, J::Right(_) | J::RightOuter(_) | J::FullOuter(_) | J::RightAnti(_));
    let inner = |op: &J| matches!(op, J::Join(_) | J::Inner(_) | J::CrossJoin(_) | J::LeftSemi(_) | J::Semi(_) | J::RightSemi(_));
    (empty(&from.relation) && !from.joins.iter().any(|j| keeps_right(&j.join_operator)))
        || from.joins.iter().any(|j| inner(&j.join_operator) && empty(&j.relation))
}

/// Whether `expr` calls an aggregate function itself (not in a subquery).
fn has_aggregate(expr: &Expr) -> bool {
    /// Counts the subqueries it is in.
    struct Finder(usize);
    impl ast::Visitor for Finder {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            self.0 += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            self.0 -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Function(f) if self.0 == 0 && is_aggregate(f) => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    ast::Visit::visit(expr, &mut Finder(0)).is_break()
}

fn is_aggregate(f: &ast::Function) -> bool {
    f.over.is_none()
        && f.name.0.last().is_some_and(|p| {
            matches!(p, ObjectNamePart::Identifier(i) if AGGREGATES.contains(&i.value.to_ascii_lowercase().as_str()))
        })
}

// ---------------------------------------------------------------------------------
// Building the syntax tree.

/// The expression, leaving NULL in its place.
fn take(expr: &mut Expr) -> Expr {
    std::mem::replace(expr, Expr::value(Value::Null))
}

fn ident(name: &str) -> ObjectNamePart {
    ObjectNamePart::Identifier(Ident::new(name))
}

fn function(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(ast::Function {
        name: ObjectName(vec![ident(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: args.into_iter().map(|a| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(a))).collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::parser::DFParser;

    /// The statement after the rewrite, as SQL text.
    fn rewritten(sql: &str) -> String {
        let mut statements = DFParser::parse_sql(sql).expect("parses");
        let mut statement = statements.pop_front().expect("one statement");
        rewrite(&mut statement);
        statement.to_string()
    }

    #[test]
    fn qualified_operators_collations_and_functions() {
        assert_eq!(
            rewritten("SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid)"),
            "SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname ~ '^(t)$' AND pg_table_is_visible(c.oid)"
        );
        assert_eq!(rewritten("SELECT a OPERATOR(pg_catalog.=) b, x COLLATE \"C\""), "SELECT a = b, x");
        // Other collations and operators are left for the planner to judge.
        assert_eq!(rewritten("SELECT x COLLATE \"de_DE\""), "SELECT x COLLATE \"de_DE\"");
        assert_eq!(rewritten("SELECT a OPERATOR(myschema.~) b"), "SELECT a OPERATOR(myschema.~) b");
        assert_eq!(rewritten("SELECT other.f(1)"), "SELECT other.f(1)");
    }

    #[test]
    fn oid_casts() {
        assert_eq!(rewritten("SELECT * FROM pg_attribute WHERE attrelid = '16385'::pg_catalog.regclass"),
            "SELECT * FROM pg_catalog.pg_attribute WHERE attrelid = '16385'::BIGINT");
        assert_eq!(rewritten("SELECT '16385'::regclass, 26::oid"), "SELECT '16385'::BIGINT, 26::BIGINT");
        assert_eq!(
            rewritten("SELECT 'lineitem'::regclass"),
            "SELECT (SELECT max(oid) FROM pg_catalog.pg_class WHERE relname = 'lineitem')"
        );
        assert_eq!(
            rewritten("SELECT 'public.\"T\"'::regclass"),
            "SELECT (SELECT max(oid) FROM pg_catalog.pg_class WHERE relname = 'T' AND relnamespace = (SELECT max(oid) FROM pg_catalog.pg_namespace WHERE nspname = 'public'))"
        );
        assert_eq!(
            rewritten("SELECT CASE WHEN c.reloftype = 0 THEN '' ELSE c.reloftype::pg_catalog.regtype::pg_catalog.text END FROM pg_catalog.pg_class c"),
            "SELECT CASE WHEN c.reloftype = 0 THEN '' ELSE format_type(c.reloftype, NULL) END FROM pg_catalog.pg_class c"
        );
        assert_eq!(rewritten("SELECT relname::pg_catalog.name, relkind::\"char\""), "SELECT relname::TEXT, relkind::TEXT");
        assert_eq!(
            rewritten("SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass"),
            "SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = (SELECT max(c.oid) FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE CAST(c.oid AS TEXT) = $1 OR c.relname = $1 \
             OR n.nspname || '.' || c.relname = $1)"
        );
    }

    #[test]
    fn scalar_subqueries_of_catalog_queries_are_aggregated() {
        assert_eq!(
            rewritten("SELECT a.attname, (SELECT c.collname FROM pg_catalog.pg_collation c WHERE c.oid = a.attcollation) AS coll, (SELECT count(*) FROM pg_catalog.pg_type) FROM pg_catalog.pg_attribute a"),
            "SELECT a.attname, (SELECT max(c.collname) FROM pg_catalog.pg_collation c WHERE c.oid = a.attcollation) AS coll, (SELECT count(*) FROM pg_catalog.pg_type) FROM pg_catalog.pg_attribute a"
        );
        // psql's `\d TABLE` columns: conditions on outer columns only run the subquery;
        // an outer column equal to an inner one is replaced by it.
        assert_eq!(
            rewritten("SELECT (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true) FROM pg_catalog.pg_attrdef d WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef), (SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type t WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> t.typcollation) FROM pg_catalog.pg_attribute a"),
            "SELECT CASE WHEN a.atthasdef THEN (SELECT max(pg_get_expr(d.adbin, d.adrelid, true)) FROM pg_catalog.pg_attrdef d WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum) END, (SELECT max(c.collname) FROM pg_catalog.pg_collation c, pg_catalog.pg_type t WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND c.oid <> t.typcollation) FROM pg_catalog.pg_attribute a"
        );
        // Not in queries of the user's tables.
        let sql = "SELECT a, (SELECT b FROM u WHERE u.k = t.k) FROM t";
        assert_eq!(rewritten(sql), sql);
    }

    #[test]
    fn plain_sql_is_left_alone() {
        for sql in [
            "SELECT a, b FROM t WHERE a ~ 'x' ORDER BY 1",
            "SELECT CAST(a AS INT), b::TEXT FROM public.t JOIN u ON t.k = u.k",
            "INSERT INTO t SELECT * FROM u",
        ] {
            assert_eq!(rewritten(sql), sql);
        }
    }
}
