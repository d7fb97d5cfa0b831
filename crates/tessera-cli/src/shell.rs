//! The interactive shell: line editing and history, multi-line statements ending in
//! `;`, timing, and dot commands.

use std::sync::Arc;
use std::time::Instant;

use rustyline::error::ReadlineError;
use tessera_engine::Session;

use crate::output::{self, Format};

const HELP: &str = "\
SQL statements end with ';' and may span several lines.
  .mode table|csv|json   output format (arrow is for non-interactive use)
  .timer on|off          print the time each statement takes
  .tables                list the tables
  .schema TABLE          show a table's columns
  .gpu                   the GPU queries run on (or why there is none)
  .help                  this text
  .quit                  leave (also .exit or Ctrl-D)";

struct ShellState {
    format: Format,
    timer: bool,
}

/// One line per fact about the GPU, or why queries run on the CPU.
pub fn gpu_status(session: &Session) -> String {
    match session.executor().gpu() {
        Some(gpu) => gpu.device().info().to_string(),
        None => "no GPU: queries run on the CPU (no CUDA driver or device, no NVRTC, or TESSERA_DISABLE_GPU set)".into(),
    }
}

/// Runs the shell until `.quit` or end of input.
pub async fn run(session: &Session, format: Format) -> Result<(), String> {
    // The GPU opens in the background (a CUDA context takes about 0.35 s), so that the
    // prompt comes at once; a query, or `.gpu`, waits for it if it is not open yet.
    let db = Arc::clone(session.database());
    std::thread::spawn(move || {
        let _ = db.executor().gpu();
    });
    let mut editor = rustyline::DefaultEditor::new().map_err(|e| format!("cannot start the line editor: {e}"))?;
    let history = std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".tessera_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    println!("Tessera {} — data directory {}", env!("CARGO_PKG_VERSION"), session.store().dir().display());
    println!("Enter SQL ending with ';', or .help");
    let mut state = ShellState { format, timer: true };
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() { "tessera> " } else { "     ...> " };
        match editor.readline(prompt) {
            Ok(line) => {
                if buffer.is_empty() && line.trim_start().starts_with('.') {
                    let _ = editor.add_history_entry(line.as_str());
                    if !dot_command(session, &mut state, line.trim()).await {
                        break;
                    }
                    continue;
                }
                buffer.push_str(&line);
                buffer.push('\n');
                if tessera_engine::is_complete(&buffer) {
                    let _ = editor.add_history_entry(buffer.trim());
                    run_statements(session, &state, &buffer).await;
                    buffer.clear();
                }
            }
            Err(ReadlineError::Interrupted) => buffer.clear(),
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(format!("reading input: {e}")),
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(())
}

async fn run_statements(session: &Session, state: &ShellState, sql: &str) {
    for statement in tessera_engine::split_statements(sql) {
        let start = Instant::now();
        match session.execute(&statement).await {
            Ok(out) => {
                let mut stdout = std::io::stdout().lock();
                if let Err(e) = output::print(&mut stdout, &out, state.format) {
                    eprintln!("Error: {e}");
                }
                if state.timer {
                    let rows = if out.is_status_only() { String::from("OK") } else { format!("{} rows", out.num_rows()) };
                    println!("({rows}, {:.3} ms)", start.elapsed().as_secs_f64() * 1e3);
                }
            }
            Err(e) => {
                eprintln!("Error: {e}");
                return;
            }
        }
    }
}

/// Runs a dot command; returns `false` when the shell should exit.
async fn dot_command(session: &Session, state: &mut ShellState, line: &str) -> bool {
    let mut words = line.split_whitespace();
    let command = words.next().unwrap_or("");
    let arg = words.next();
    match (command, arg) {
        (".quit" | ".exit", _) => return false,
        (".help", _) => println!("{HELP}"),
        (".mode", Some(m)) => match m.parse::<Format>() {
            Ok(Format::Arrow) => eprintln!("Error: .mode arrow writes binary; use --format arrow with -c"),
            Ok(f) => state.format = f,
            Err(e) => eprintln!("Error: {e}"),
        },
        (".timer", Some("on")) => state.timer = true,
        (".timer", Some("off")) => state.timer = false,
        (".tables", None) => match session.store().manifest() {
            Ok(m) => m.tables.iter().for_each(|t| println!("{}", t.name)),
            Err(e) => eprintln!("Error: {e}"),
        },
        (".schema", Some(table)) => match tessera_engine::catalog::create_table_sql(session.store(), table) {
            Ok(sql) => println!("{sql}"),
            Err(e) => eprintln!("Error: {e}"),
        },
        (".gpu", None) => println!("{}", gpu_status(session)),
        _ => eprintln!("Error: unknown or incomplete command '{line}'; try .help"),
    }
    true
}
