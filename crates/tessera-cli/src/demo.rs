//! `tessera demo`: creates a small table in the data directory and runs a few queries,
//! printing each statement and its result.

use tessera_engine::Session;

use crate::output::{self, Format};

const DEMO: &[&str] = &[
    "CREATE OR REPLACE TABLE demo_sales (region VARCHAR NOT NULL, product VARCHAR, sold DATE, qty INTEGER, price DECIMAL(10,2))",
    "INSERT INTO demo_sales VALUES \
     ('EUROPE', 'lamp', DATE '2026-01-05', 3, 19.99), ('EUROPE', 'desk', DATE '2026-01-07', 1, 249.00), \
     ('ASIA', 'lamp', DATE '2026-02-11', 10, 18.50), ('ASIA', 'chair', DATE '2026-02-12', 4, 89.90), \
     ('AMERICA', 'desk', DATE '2026-03-01', 2, 239.00), ('AMERICA', NULL, DATE '2026-03-02', 7, NULL)",
    "SELECT region, count(*) AS orders, sum(qty) AS units, sum(qty * price) AS revenue \
     FROM demo_sales GROUP BY region ORDER BY revenue DESC NULLS LAST",
    "SELECT product, avg(price) AS avg_price FROM demo_sales WHERE product IS NOT NULL GROUP BY product ORDER BY product",
    "SELECT extract(month FROM sold) AS month, sum(qty) AS units FROM demo_sales GROUP BY 1 ORDER BY 1",
];

/// Runs the demo statements.
pub async fn run(session: &Session, format: Format) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    for sql in DEMO {
        println!("tessera> {sql};");
        let out = session.execute(sql).await.map_err(|e| e.to_string())?;
        output::print(&mut stdout, &out, format).map_err(|e| e.to_string())?;
    }
    println!("The table demo_sales is stored in {}; run `tessera` to query it.", session.store().dir().display());
    Ok(())
}
