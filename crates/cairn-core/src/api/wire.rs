//! How values are written into responses and read from requests, the same for every method:
//! times, the names of enum values, dates a request names.
use serde::Serialize;

/// A time as every response writes it: RFC 3339 in UTC, to the second
/// (`2026-05-01T09:30:00Z`).
pub fn timestamp(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The name a value has on the wire: a unit variant's snake_case name (`procedure`,
/// `project`); `""` for a value that is not written as a string.
pub fn name_of<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A date a request names (`2026-08-20`: the start of that day or, with `end`, its last
/// millisecond, in UTC) or an RFC 3339 time. The error is the sentence a bad request is
/// answered with.
pub fn parse_date(s: &str, end: bool) -> Result<chrono::DateTime<chrono::Utc>, String> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    let day = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map_err(|_| format!("{s:?} is not a date (YYYY-MM-DD) or an RFC 3339 time"))?;
    let time = if end {
        day.and_hms_milli_opt(23, 59, 59, 999)
    } else {
        day.and_hms_opt(0, 0, 0)
    };
    time.map(|t| t.and_utc())
        .ok_or_else(|| format!("{s:?} is not a valid date"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_days_or_times_and_names_are_wire_names() {
        let start = parse_date("2026-08-20", false).unwrap();
        let end = parse_date("2026-08-20", true).unwrap();
        assert_eq!(timestamp(&start), "2026-08-20T00:00:00Z");
        assert_eq!(timestamp(&end), "2026-08-20T23:59:59Z");
        assert_eq!(
            timestamp(&parse_date("2026-08-20T10:00:00+02:00", false).unwrap()),
            "2026-08-20T08:00:00Z"
        );
        assert!(parse_date("last week", false).is_err());
        assert_eq!(name_of(&crate::ItemKind::Procedure), "procedure");
        assert_eq!(name_of(&3), "");
    }
}
