//! The memory switch and its pause: `memory_get`, `memory_set` and `memory_pause`.
//!
//! A pause is memory off with an end: the journal records it like an off period plus its
//! end (`Store::journal_pause`), so capture skips what happened during it for good, also
//! after it ended by itself. The end is computed from the stored time, never from a process
//! that has to be there at that instant: [`Service::memory_enabled`] is on again as soon as
//! the end has passed, and the state is settled (stored on, journaled) by the next call that
//! reads it or by the service's pause timer, whichever comes first.
use cairn_core::Timestamp;
use cairn_core::api::{MemoryPauseReq, MemorySetReq, MemoryState};
use chrono::{DateTime, Duration, Local, TimeZone, Utc};

use crate::pause::{MEMORY_KEY, PAUSE_KEY, Pause};
use crate::{ApiError, Result, Service};

/// The longest pause (longer: switch memory off).
const MAX_PAUSE: Duration = Duration::days(30);

/// When a pause asked for as `spec` ends, from `now`: `15m`, `1h`, `<N>m`, `<N>h` (N ≥ 1,
/// at most 30 days), `tomorrow` (the next midnight in the time zone `tz`: the service's local
/// one) or `until_resumed` (`None`). Errors name what is wrong.
pub(crate) fn pause_end<Tz: TimeZone>(
    spec: &str,
    now: DateTime<Utc>,
    tz: &Tz,
) -> std::result::Result<Option<DateTime<Utc>>, String> {
    let spec = spec.trim();
    let lower = spec.to_ascii_lowercase();
    match lower.as_str() {
        "until_resumed" | "until-resumed" | "resumed" => return Ok(None),
        "tomorrow" => return Ok(Some(next_midnight(now, tz))),
        _ => {}
    }
    let bad = || {
        format!(
            "cannot read the pause length {spec:?}: give 15m, 1h, <N>m, <N>h (N a whole number, at most 30 days), tomorrow or until_resumed"
        )
    };
    let (digits, unit) = lower.split_at(lower.len().saturating_sub(1));
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: i64 = digits.parse().map_err(|_| bad())?;
    if n < 1 {
        return Err(format!(
            "the pause length {spec:?} is not positive: pause for at least 1 minute"
        ));
    }
    let length = match unit {
        "m" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        _ => return Err(bad()),
    }
    .filter(|d| *d <= MAX_PAUSE)
    .ok_or_else(|| {
        format!("the pause length {spec:?} is over 30 days: switch memory off instead (cairn memory off)")
    })?;
    Ok(Some(now + length))
}

/// The next midnight after `now` in `tz`, in UTC. Where that midnight does not exist (a
/// daylight-saving jump at midnight), the first instant of the day that does.
fn next_midnight<Tz: TimeZone>(now: DateTime<Utc>, tz: &Tz) -> DateTime<Utc> {
    let today = now.with_timezone(tz).date_naive();
    let day = today.succ_opt().unwrap_or(today);
    let mut at = day.and_time(chrono::NaiveTime::MIN);
    // A skipped hour lasts at most an hour or two; step through it.
    for _ in 0..8 {
        if let Some(t) = tz.from_local_datetime(&at).earliest() {
            return t.with_timezone(&Utc);
        }
        at += Duration::minutes(30);
    }
    now + Duration::days(1)
}

/// Reads an explicit end: RFC 3339, in the future, at most 30 days ahead.
fn explicit_end(until: &str, now: DateTime<Utc>) -> std::result::Result<DateTime<Utc>, String> {
    let end = DateTime::parse_from_rfc3339(until.trim())
        .map_err(|e| format!("cannot read the pause end {until:?} as an RFC 3339 time: {e}"))?
        .with_timezone(&Utc);
    if end <= now {
        return Err(format!(
            "the pause end {until:?} has passed: give a time in the future"
        ));
    }
    if end - now > MAX_PAUSE {
        return Err(format!(
            "the pause end {until:?} is over 30 days away: switch memory off instead (cairn memory off)"
        ));
    }
    Ok(end)
}

fn rfc3339(t: Timestamp) -> String {
    cairn_core::api::timestamp(&t)
}

impl Service {
    /// Whether memory is on: switched on, or paused and the pause has ended.
    pub fn memory_enabled(&self) -> bool {
        *self.memory_switch().0.borrow() || self.memory_switch().1.expired(Utc::now())
    }

    pub(crate) async fn memory_state(&self) -> Result<MemoryState> {
        self.settle_pause().await?;
        let stored = self.store().setting::<bool>(MEMORY_KEY).await?;
        let pause = self.memory_switch().1.get();
        Ok(match stored {
            Some((enabled, at)) => MemoryState {
                enabled,
                changed_at: Some(rfc3339(at)),
                paused: !enabled && pause.is_some(),
                paused_until: pause
                    .filter(|_| !enabled)
                    .and_then(|p| p.until)
                    .map(rfc3339),
            },
            None => MemoryState {
                enabled: true,
                changed_at: None,
                paused: false,
                paused_until: None,
            },
        })
    }

    /// Switches memory on or off; either ends a pause.
    pub(crate) async fn set_memory(&self, req: MemorySetReq) -> Result<MemoryState> {
        let _switching = self.memory_switch().1.switching.lock().await;
        // The switch goes to the journal first (its time, never content): what happens
        // while memory is off is skipped for good when it comes back on. Ending a pause is
        // journaled too, so the pause's own end no longer closes the period.
        let paused = self.memory_switch().1.get().is_some();
        if req.enabled != self.memory_enabled() || paused {
            self.store().journal_memory(req.enabled).await?;
        }
        self.store().set_setting(MEMORY_KEY, &req.enabled).await?;
        if paused {
            self.store().set_setting(PAUSE_KEY, &None::<Pause>).await?;
            self.memory_switch().1.set(None);
        }
        self.memory_switch().0.send_replace(req.enabled);
        if req.enabled {
            self.wake_indexing();
        }
        tracing::info!(enabled = req.enabled, "memory switched");
        drop(_switching);
        self.memory_state().await
    }

    /// Pauses memory: off now, on again by itself at the end.
    pub(crate) async fn pause_memory(&self, req: MemoryPauseReq) -> Result<MemoryState> {
        let now = Utc::now();
        let until = match (req.duration.as_deref(), req.until.as_deref()) {
            (Some(spec), None) => pause_end(spec, now, &Local),
            (None, Some(until)) => explicit_end(until, now).map(Some),
            (Some(_), Some(_)) => Err("give either for or until, not both".to_owned()),
            (None, None) => Err(
                "say how long to pause: for (15m, 1h, tomorrow, until_resumed) or until (RFC 3339)"
                    .to_owned(),
            ),
        }
        .map_err(ApiError::bad_request)?;
        let switching = self.memory_switch().1.switching.lock().await;
        let pause = Pause { until };
        self.store().journal_pause(until).await?;
        self.store().set_setting(MEMORY_KEY, &false).await?;
        self.store().set_setting(PAUSE_KEY, &Some(pause)).await?;
        self.memory_switch().1.set(Some(pause));
        self.memory_switch().0.send_replace(false);
        tracing::info!(until = ?until, "memory paused");
        drop(switching);
        self.memory_state().await
    }

    /// Once a pause has ended: memory on, stored and journaled (the journal's period still
    /// ends at the pause's end, not at this call).
    pub(crate) async fn settle_pause(&self) -> Result<()> {
        if !self.memory_switch().1.expired(Utc::now()) {
            return Ok(());
        }
        let _switching = self.memory_switch().1.switching.lock().await;
        // Resumed or paused again meanwhile.
        if !self.memory_switch().1.expired(Utc::now()) {
            return Ok(());
        }
        self.store().journal_memory(true).await?;
        self.store().set_setting(MEMORY_KEY, &true).await?;
        self.store().set_setting(PAUSE_KEY, &None::<Pause>).await?;
        self.memory_switch().1.set(None);
        self.memory_switch().0.send_replace(true);
        self.wake_indexing();
        tracing::info!("the pause ended; memory is on");
        Ok(())
    }

    /// Waits until the pause in effect ends (checking at least every 30 s, so a machine that
    /// slept through the end resumes soon after it wakes), or until the pause changes.
    async fn pause_tick(&self) {
        let wait = match self.memory_switch().1.get().and_then(|p| p.until) {
            Some(until) => (until - Utc::now())
                .to_std()
                .unwrap_or_default()
                .min(std::time::Duration::from_secs(30)),
            None => std::time::Duration::from_secs(3600),
        };
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = self.memory_switch().1.changed.notified() => {}
        }
    }
}

/// The pause timer: settles a pause as soon as it ends, so workers resume and the tray and
/// window see memory on without anyone asking first.
pub(crate) fn spawn_pause_timer(
    service: Service,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = service.settle_pause().await {
                tracing::warn!(error = %e, "cannot end the pause");
            }
            tokio::select! {
                () = service.pause_tick() => {}
                _ = shutdown.changed() => {}
            }
            if *shutdown.borrow() {
                break;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::FixedOffset;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .map(|d| d.with_timezone(&Utc))
            .unwrap_or_default()
    }

    #[test]
    fn pause_lengths_parse() {
        let now = utc("2026-12-02T10:20:00Z");
        let tz = Utc;
        assert_eq!(
            pause_end("15m", now, &tz),
            Ok(Some(utc("2026-12-02T10:35:00Z")))
        );
        assert_eq!(
            pause_end("1h", now, &tz),
            Ok(Some(utc("2026-12-02T11:20:00Z")))
        );
        assert_eq!(
            pause_end(" 90M ", now, &tz),
            Ok(Some(utc("2026-12-02T11:50:00Z")))
        );
        assert_eq!(
            pause_end("720h", now, &tz),
            Ok(Some(utc("2027-01-01T10:20:00Z")))
        );
        assert_eq!(pause_end("until_resumed", now, &tz), Ok(None));
        assert_eq!(
            pause_end("tomorrow", now, &tz),
            Ok(Some(utc("2026-12-03T00:00:00Z")))
        );
    }

    #[test]
    fn pause_bad_lengths_say_why() {
        let now = utc("2026-12-02T10:20:00Z");
        for bad in [
            "", "m", "15", "15s", "1d", "1.5h", "-5m", "+5m", "abc", "15 m",
        ] {
            let e = pause_end(bad, now, &Utc).expect_err(bad);
            assert!(e.contains("cannot read the pause length"), "{bad}: {e}");
        }
        let e = pause_end("0m", now, &Utc).expect_err("0m");
        assert!(e.contains("not positive"), "{e}");
        let e = pause_end("721h", now, &Utc).expect_err("721h");
        assert!(e.contains("over 30 days"), "{e}");
        let e = pause_end("99999999999999h", now, &Utc).expect_err("huge");
        assert!(e.contains("over 30 days"), "{e}");
    }

    #[test]
    fn pause_until_tomorrow_is_the_next_local_midnight() {
        // 23:30 in UTC+2 is 21:30 UTC; the next local midnight is 22:00 UTC the same day.
        let plus2 = FixedOffset::east_opt(2 * 3600).expect("offset");
        let now = utc("2026-12-02T21:30:00Z");
        assert_eq!(
            pause_end("tomorrow", now, &plus2),
            Ok(Some(utc("2026-12-02T22:00:00Z")))
        );
        // Just after local midnight, it is the midnight a day later.
        let now = utc("2026-12-02T22:00:01Z");
        assert_eq!(
            pause_end("tomorrow", now, &plus2),
            Ok(Some(utc("2026-12-03T22:00:00Z")))
        );
        // West of UTC.
        let minus5 = FixedOffset::west_opt(5 * 3600).expect("offset");
        let now = utc("2026-12-02T03:00:00Z"); // 22:00 on the 1st in UTC-5
        assert_eq!(
            pause_end("tomorrow", now, &minus5),
            Ok(Some(utc("2026-12-02T05:00:00Z")))
        );
    }

    #[test]
    fn pause_explicit_end_must_be_ahead_and_near() {
        let now = utc("2026-12-02T10:20:00Z");
        assert_eq!(
            explicit_end("2026-12-02T12:00:00+01:00", now),
            Ok(utc("2026-12-02T11:00:00Z"))
        );
        assert!(
            explicit_end("2026-12-02T10:20:00Z", now)
                .expect_err("now")
                .contains("has passed")
        );
        assert!(
            explicit_end("2027-02-02T10:20:00Z", now)
                .expect_err("far")
                .contains("over 30 days")
        );
        assert!(
            explicit_end("tomorrow", now)
                .expect_err("text")
                .contains("RFC 3339")
        );
    }
}
