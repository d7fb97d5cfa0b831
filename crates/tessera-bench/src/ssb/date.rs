//! The DATE dimension (SSB specification §2.5; ssb-dbgen `mk_date()`, `gen_season()`,
//! `gen_holiday_fl()`, `is_last_day_in_month()` in `build.c`, `pr_date()` in `print.c`).
//!
//! One row per day from 1992-01-01 to 1998-12-31 (2,557 rows at every scale factor). No
//! random numbers are involved. dbgen's quirks are reproduced:
//!
//! - `d_daynuminweek` is `(tm_wday + 1) % 7 + 1` and `d_dayofweek` is the name at that
//!   position in `Sunday..Saturday`, so both are one day ahead of the real weekday
//!   (1992-01-01, a Wednesday, is "Thursday", 5);
//! - `d_lastdayinweekfl` is 1 when `d_daynuminweek` is 7, `d_weekdayfl` is 1 unless it is
//!   1 or 7 — both judged on the shifted numbering;
//! - `d_weeknuminyear` is `d_daynuminyear / 7 + 1`;
//! - `d_sellingseason`: Jan–Mar Winter, Apr Spring, May–Aug Summer, Sep–Oct Fall,
//!   Nov–Dec Christmas;
//! - `d_holidayfl` is 1 on Dec 24, Jan 1, and the 20th of Feb, Apr, May, Jul, Aug, Sep,
//!   Oct and Nov.

use super::calendar::{self, days_in_month};
use super::inline_str::InlineStr;
use super::scale::{DATE_ROWS, chunk};
use super::tbl::{TblFields, TblRow, display_as_tbl};

const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const WEEKDAY_NAMES: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// `holidays[]` from `build.c`: (month, day).
const HOLIDAYS: [(i32, i32); 10] = [
    (12, 24),
    (1, 1),
    (2, 20),
    (4, 20),
    (5, 20),
    (7, 20),
    (8, 20),
    (9, 20),
    (10, 20),
    (11, 20),
];

/// One row of DATE.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Date {
    /// `yyyymmdd`.
    pub d_datekey: i64,
    /// E.g. `January 1, 1992`.
    pub d_date: InlineStr<18>,
    pub d_dayofweek: &'static str,
    pub d_month: &'static str,
    pub d_year: i64,
    /// `yyyymm`.
    pub d_yearmonthnum: i64,
    /// E.g. `Jan1992`.
    pub d_yearmonth: InlineStr<7>,
    pub d_daynuminweek: i64,
    pub d_daynuminmonth: i64,
    pub d_daynuminyear: i64,
    pub d_monthnuminyear: i64,
    pub d_weeknuminyear: i64,
    pub d_sellingseason: &'static str,
    pub d_lastdayinweekfl: bool,
    pub d_lastdayinmonthfl: bool,
    pub d_holidayfl: bool,
    pub d_weekdayfl: bool,
}

impl TblRow for Date {
    fn write_fields(&self, f: &mut TblFields<'_>) {
        f.int(self.d_datekey)
            .str(self.d_date.as_str())
            .str(self.d_dayofweek)
            .str(self.d_month)
            .int(self.d_year)
            .int(self.d_yearmonthnum)
            .str(self.d_yearmonth.as_str())
            .int(self.d_daynuminweek)
            .int(self.d_daynuminmonth)
            .int(self.d_daynuminyear)
            .int(self.d_monthnuminyear)
            .int(self.d_weeknuminyear)
            .str(self.d_sellingseason)
            .flag(self.d_lastdayinweekfl)
            .flag(self.d_lastdayinmonthfl)
            .flag(self.d_holidayfl)
            .flag(self.d_weekdayfl);
    }
}

display_as_tbl!(Date);

/// `gen_season()`.
fn selling_season(month: i32) -> &'static str {
    match month {
        11 | 12 => "Christmas",
        5..=8 => "Summer",
        1..=3 => "Winter",
        4 => "Spring",
        _ => "Fall",
    }
}

/// The DATE row for the day `offset` days after 1992-01-01.
fn make_date(offset: i64) -> Option<Date> {
    let day = calendar::day(offset)?;
    let month_name = MONTH_NAMES.get(usize::try_from(day.month - 1).ok()?)?;
    let day_num_in_week = (day.weekday + 1) % 7 + 1;
    let day_of_week = WEEKDAY_NAMES.get(usize::try_from(day_num_in_week - 1).ok()?)?;

    let mut date = InlineStr::new();
    date.push_str(month_name);
    date.push(b' ');
    date.push_int(i64::from(day.day), 0);
    date.push_str(", ");
    date.push_int(i64::from(day.year), 0);

    let mut year_month = InlineStr::new();
    year_month.push_str(month_name.get(..3).unwrap_or(month_name));
    year_month.push_int(i64::from(day.year), 0);

    Some(Date {
        d_datekey: i64::from(day.yyyymmdd),
        d_date: date,
        d_dayofweek: day_of_week,
        d_month: month_name,
        d_year: i64::from(day.year),
        d_yearmonthnum: i64::from(day.year * 100 + day.month),
        d_yearmonth: year_month,
        d_daynuminweek: i64::from(day_num_in_week),
        d_daynuminmonth: i64::from(day.day),
        d_daynuminyear: i64::from(day.day_of_year),
        d_monthnuminyear: i64::from(day.month),
        d_weeknuminyear: i64::from(day.day_of_year / 7 + 1),
        d_sellingseason: selling_season(day.month),
        d_lastdayinweekfl: day_num_in_week == 7,
        d_lastdayinmonthfl: day.day == days_in_month(day.year, day.month),
        d_holidayfl: HOLIDAYS.contains(&(day.month, day.day)),
        d_weekdayfl: day_num_in_week != 1 && day_num_in_week != 7,
    })
}

/// Generates DATE, or chunk `part` of `num_parts` of it.
#[derive(Debug, Clone)]
pub struct DateGenerator {
    start: i64,
    count: i64,
}

impl DateGenerator {
    /// Chunk `part` (1-based) of `num_parts` of DATE. The table does not depend on
    /// `scale_factor` (see [`super::scale`] for how this differs from dbgen at SF < 1).
    pub fn new(scale_factor: f64, part: i32, num_parts: i32) -> Self {
        let (start, count) = chunk(Self::row_count(scale_factor), part, num_parts);
        Self { start, count }
    }

    /// Rows in the whole DATE table: always 2,557.
    pub fn row_count(_scale_factor: f64) -> i64 {
        DATE_ROWS
    }

    /// Rows this generator produces.
    pub fn len(&self) -> i64 {
        self.count
    }

    /// Whether this generator produces no rows.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Iterate the rows.
    pub fn iter(&self) -> DateIter {
        DateIter {
            next: self.start,
            end: self.start + self.count,
        }
    }
}

impl IntoIterator for DateGenerator {
    type Item = Date;
    type IntoIter = DateIter;
    fn into_iter(self) -> DateIter {
        self.iter()
    }
}

/// Iterator over DATE rows.
#[derive(Debug, Clone)]
pub struct DateIter {
    next: i64,
    end: i64,
}

impl Iterator for DateIter {
    type Item = Date;

    fn next(&mut self) -> Option<Date> {
        if self.next >= self.end {
            return None;
        }
        let date = make_date(self.next);
        self.next += 1;
        date
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.end - self.next).unwrap_or(0);
        (n, Some(n))
    }
}

impl ExactSizeIterator for DateIter {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_and_last_rows() {
        let rows: Vec<String> = DateGenerator::new(1.0, 1, 1)
            .iter()
            .map(|d| d.to_string())
            .collect();
        assert_eq!(rows.len(), 2557);
        assert_eq!(
            rows[0],
            "19920101|January 1, 1992|Thursday|January|1992|199201|Jan1992|5|1|1|1|1|Winter|0|0|1|1|"
        );
        assert_eq!(
            rows[2556],
            "19981231|December 31, 1998|Friday|December|1998|199812|Dec1998|6|31|365|12|53|Christmas|0|1|0|1|"
        );
    }

    #[test]
    fn seasons() {
        assert_eq!(selling_season(1), "Winter");
        assert_eq!(selling_season(4), "Spring");
        assert_eq!(selling_season(8), "Summer");
        assert_eq!(selling_season(10), "Fall");
        assert_eq!(selling_season(11), "Christmas");
    }

    #[test]
    fn chunks_concatenate_to_the_whole_table() {
        let whole: Vec<Date> = DateGenerator::new(1.0, 1, 1).iter().collect();
        let chunked: Vec<Date> = (1..=5)
            .flat_map(|p| DateGenerator::new(1.0, p, 5).iter())
            .collect();
        assert_eq!(whole, chunked);
    }
}
