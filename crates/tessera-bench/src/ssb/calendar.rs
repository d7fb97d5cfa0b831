//! The calendar of the SSB date range, 1992-01-01 .. 1998-12-31 (dbgen's `STARTDATE` and
//! `TOTDATE` = 2,557 days).
//!
//! Both the date dimension (`mk_date()`, which walks `localtime()` one day at a time) and
//! lineorder's `yyyymmdd` dates (`mk_ascdate()`/`mk_time()` with SSB's `PR_DATE`) index
//! days by their offset from 1992-01-01. This module precomputes those 2,557 days once.

use std::sync::LazyLock;

use super::scale::DATE_ROWS;

/// One day of the SSB calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Day {
    /// Four-digit year.
    pub year: i32,
    /// Month, 1..=12.
    pub month: i32,
    /// Day of month, 1..=31.
    pub day: i32,
    /// Day of year, 1..=366 (`tm_yday + 1`).
    pub day_of_year: i32,
    /// Day of week as C's `tm_wday`: 0 = Sunday .. 6 = Saturday.
    pub weekday: i32,
    /// `year * 10000 + month * 100 + day`.
    pub yyyymmdd: i32,
}

/// 1992-01-01 was a Wednesday.
const FIRST_WEEKDAY: i32 = 3;
const FIRST_YEAR: i32 = 1992;

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1..=12) of `year`.
pub(crate) fn days_in_month(year: i32, month: i32) -> i32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

static DAYS: LazyLock<Vec<Day>> = LazyLock::new(|| {
    let mut days = Vec::with_capacity(DATE_ROWS as usize);
    let (mut year, mut month, mut day, mut day_of_year) = (FIRST_YEAR, 1, 1, 1);
    for offset in 0..DATE_ROWS as i32 {
        days.push(Day {
            year,
            month,
            day,
            day_of_year,
            weekday: (FIRST_WEEKDAY + offset) % 7,
            yyyymmdd: year * 10_000 + month * 100 + day,
        });
        day += 1;
        day_of_year += 1;
        if day > days_in_month(year, month) {
            day = 1;
            month += 1;
            if month > 12 {
                month = 1;
                year += 1;
                day_of_year = 1;
            }
        }
    }
    days
});

/// The day `offset` days after 1992-01-01, for `offset` in `0..2557`.
pub(crate) fn day(offset: i64) -> Option<&'static Day> {
    usize::try_from(offset).ok().and_then(|i| DAYS.get(i))
}

/// `yyyymmdd` of the day `offset` days after 1992-01-01 (0 outside the calendar, which the
/// generators never ask for).
#[inline]
pub(crate) fn yyyymmdd(offset: i64) -> i32 {
    day(offset).map_or(0, |d| d.yyyymmdd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_edges() {
        let first = day(0).copied();
        assert_eq!(
            first,
            Some(Day {
                year: 1992,
                month: 1,
                day: 1,
                day_of_year: 1,
                weekday: 3,
                yyyymmdd: 19920101
            })
        );
        assert_eq!(yyyymmdd(59), 19920229); // 1992 is a leap year
        assert_eq!(yyyymmdd(60), 19920301);
        assert_eq!(
            day(365).map(|d| (d.yyyymmdd, d.day_of_year)),
            Some((19921231, 366))
        );
        assert_eq!(
            day(366).map(|d| (d.yyyymmdd, d.day_of_year)),
            Some((19930101, 1))
        );
        assert_eq!(yyyymmdd(DATE_ROWS - 1), 19981231);
        assert_eq!(day(DATE_ROWS), None);
        assert_eq!(day(-1), None);
        // 1998-12-31 was a Thursday.
        assert_eq!(day(DATE_ROWS - 1).map(|d| d.weekday), Some(4));
    }
}
