//! Dates in a query: "in May", "May 2023", "in 2022", "on 8 May", "yesterday", "last week",
//! "last month", "last year", "last Saturday". Each becomes a time span; records inside one
//! gain a little score (they are not filtered: people misremember dates).
use cairn_core::Timestamp;
use chrono::{Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

const WEEKDAYS: [(&str, Weekday); 7] = [
    ("monday", Weekday::Mon),
    ("tuesday", Weekday::Tue),
    ("wednesday", Weekday::Wed),
    ("thursday", Weekday::Thu),
    ("friday", Weekday::Fri),
    ("saturday", Weekday::Sat),
    ("sunday", Weekday::Sun),
];

fn month_of(word: &str) -> Option<u32> {
    if word.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| *m == word || (word.len() == 3 && m.starts_with(word) && word != "may"))
        .or_else(|| (word == "may").then_some(4))
        .map(|i| i as u32 + 1)
}

fn year_of(word: &str) -> Option<i32> {
    let y: i32 = word.parse().ok()?;
    (word.len() == 4 && (1970..=2100).contains(&y)).then_some(y)
}

fn day_start(d: NaiveDate) -> Timestamp {
    Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default())
}

fn span(from: NaiveDate, days: i64) -> (Timestamp, Timestamp) {
    let start = day_start(from);
    (
        start,
        start + Duration::days(days) - Duration::milliseconds(1),
    )
}

fn month_span(year: i32, month: u32) -> Option<(Timestamp, Timestamp)> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)?
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)?
    };
    Some(span(first, (next - first).num_days()))
}

/// The time spans a query's words name, relative to `now` for words like "yesterday" and
/// for a month named without its year (the latest such month not after `now`).
pub fn spans(query: &str, now: Timestamp) -> Vec<(Timestamp, Timestamp)> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let today = now.date_naive();
    let mut out = Vec::new();
    let mut used_year = vec![false; words.len()];
    for (i, w) in words.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| words[j].as_str());
        let next = words.get(i + 1).map(String::as_str);
        if let Some(m) = month_of(w) {
            // "may" is a month only beside a day, a year or a preposition.
            let day = prev
                .and_then(|p| p.trim_end_matches(char::is_alphabetic).parse::<u32>().ok())
                .or_else(|| next.and_then(|n| n.trim_end_matches(char::is_alphabetic).parse().ok()))
                .filter(|d| (1..=31).contains(d));
            let year_at = [i + 1, i + 2]
                .into_iter()
                .find(|&j| words.get(j).and_then(|y| year_of(y)).is_some());
            let year = year_at.and_then(|j| year_of(&words[j]));
            if w == "may"
                && day.is_none()
                && year.is_none()
                && !matches!(
                    prev,
                    Some("in" | "of" | "since" | "during" | "early" | "late" | "mid")
                )
            {
                continue;
            }
            if let Some(j) = year_at {
                used_year[j] = true;
            }
            let year = year.unwrap_or(if m <= today.month() {
                today.year()
            } else {
                today.year() - 1
            });
            match day.and_then(|d| NaiveDate::from_ymd_opt(year, m, d)) {
                Some(d) => out.push(span(d, 1)),
                None => out.extend(month_span(year, m)),
            }
            continue;
        }
        match (prev, w.as_str()) {
            (_, "yesterday") => out.push(span(today - Duration::days(1), 1)),
            (_, "today") => out.push(span(today, 1)),
            (Some("last"), "week") => {
                out.push(span(today - Duration::days(7), 7));
            }
            (Some("last"), "month") => {
                let (y, m) = if today.month() == 1 {
                    (today.year() - 1, 12)
                } else {
                    (today.year(), today.month() - 1)
                };
                out.extend(month_span(y, m));
            }
            (Some("last"), "year") => {
                if let Some(d) = NaiveDate::from_ymd_opt(today.year() - 1, 1, 1) {
                    let end = NaiveDate::from_ymd_opt(today.year(), 1, 1).unwrap_or(d);
                    out.push(span(d, (end - d).num_days()));
                }
            }
            (Some("last"), day) => {
                if let Some((_, wd)) = WEEKDAYS.iter().find(|(n, _)| *n == day) {
                    let back = (7 + today.weekday().num_days_from_monday()
                        - wd.num_days_from_monday())
                        % 7;
                    let back = if back == 0 { 7 } else { back };
                    out.push(span(today - Duration::days(i64::from(back)), 1));
                }
            }
            _ => {}
        }
    }
    for (i, w) in words.iter().enumerate() {
        if used_year[i] {
            continue;
        }
        if let Some(y) = year_of(w)
            && let Some(d) = NaiveDate::from_ymd_opt(y, 1, 1)
        {
            let end = NaiveDate::from_ymd_opt(y + 1, 1, 1).unwrap_or(d);
            out.push(span(d, (end - d).num_days()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, m: u32, d: u32) -> Timestamp {
        day_start(NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default())
    }

    #[test]
    fn months_years_days_and_relative_words_become_spans() {
        let now = at(2023, 8, 17); // a Thursday
        assert_eq!(
            spans("what did she do in May 2023?", now),
            vec![(at(2023, 5, 1), at(2023, 6, 1) - Duration::milliseconds(1))]
        );
        assert_eq!(
            spans("the trip in December", now)[0].0,
            at(2022, 12, 1),
            "a month after now is last year's"
        );
        assert_eq!(spans("on 8 May", now)[0].0, at(2023, 5, 8));
        assert_eq!(spans("what happened in 2022", now)[0].0, at(2022, 1, 1));
        assert_eq!(spans("yesterday's build", now)[0].0, at(2023, 8, 16));
        assert_eq!(spans("last saturday", now)[0].0, at(2023, 8, 12));
        assert_eq!(spans("last month", now)[0].0, at(2023, 7, 1));
        assert!(spans("you may want to retry", now).is_empty());
        assert!(spans("fix the migration test", now).is_empty());
    }
}
