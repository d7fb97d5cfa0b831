//! Splitting a script into statements at top-level semicolons.
//!
//! Quotes ('…', "…"), line comments (`-- …`) and block comments (`/* … */`) are
//! respected; empty statements are dropped. DataFusion's parser would also split, but
//! `COPY … FROM` is handled by Tessera before DataFusion sees a statement.

/// The statements of `sql`, trimmed, without their terminating `;`.
pub fn split_statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                current.push(c);
                for d in chars.by_ref() {
                    current.push(d);
                    if d == c {
                        break; // a doubled quote re-opens on the next iteration
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        current.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                current.push(' ');
            }
            ';' => push_statement(&mut out, &mut current),
            _ => current.push(c),
        }
    }
    push_statement(&mut out, &mut current);
    out
}

fn push_statement(out: &mut Vec<String>, current: &mut String) {
    let s = current.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
    current.clear();
}

/// Whether `sql` ends a statement: its last token outside quotes and comments is `;`.
/// The shell keeps reading lines until this holds.
pub fn is_complete(sql: &str) -> bool {
    let mut in_quote: Option<char> = None;
    let mut last_significant = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = in_quote {
            if c == q {
                in_quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                in_quote = Some(c);
                last_significant = Some(c);
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            c if c.is_whitespace() => {}
            c => last_significant = Some(c),
        }
    }
    in_quote.is_none() && last_significant == Some(';')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_top_level_semicolons_only() {
        let s = split_statements("select 'a;b'; -- c;d\nselect \"x;\" /* ; */ from t;;  ");
        assert_eq!(s, vec!["select 'a;b'", "select \"x;\"   from t"]);
        assert_eq!(split_statements("select 'it''s;'"), vec!["select 'it''s;'"]);
        assert!(split_statements("  ;  ").is_empty());
    }

    #[test]
    fn completeness_ignores_quoted_and_commented_semicolons() {
        assert!(is_complete("select 1;"));
        assert!(is_complete("select 1; -- done"));
        assert!(!is_complete("select ';'"));
        assert!(!is_complete("select 1 -- ;"));
        assert!(!is_complete("select 1"));
    }
}
