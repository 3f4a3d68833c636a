//! # cairn-desktop
//!
//! The desktop shell: the main window with the UI, the tray menu (Open, Pause memory for 15
//! minutes / 1 hour / until tomorrow / until resumed, Resume memory, Clear…, Quit; its tooltip
//! and a dimmed icon say when memory is paused or off, and until when), single instance and
//! launch at login. It hosts the service in-process
//! (or, when a `cairn daemon` already owns the store, becomes its client) and exposes one
//! Tauri command, `rpc`, that forwards to cairn-api's dispatch table. No logic lives here.
#![cfg_attr(
    all(not(debug_assertions), target_os = "windows"),
    windows_subsystem = "windows"
)]

use std::time::Duration;

use cairn_api::{Backend, Host, ServiceOptions, SharedBackend};
use cairn_config::{Overrides, Paths, Settings};
use cairn_core::api::{ApiErrorBody, MemoryPauseReq, MemorySetReq, MemoryState};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{Emitter, Manager, RunEvent, WindowEvent};

/// The one command: every UI call goes through cairn-api's dispatch table.
#[allow(
    clippy::let_underscore_must_use,
    reason = "the code tauri::command generates"
)]
#[tauri::command]
async fn rpc(
    backend: tauri::State<'_, SharedBackend>,
    method: String,
    params: serde_json::Value,
) -> Result<serde_json::Value, ApiErrorBody> {
    backend.call(&method, params).await.map_err(|e| e.body())
}

fn show_main(app: &tauri::AppHandle) {
    if let Some(w) = app.get_webview_window("main")
        && let Err(e) = w
            .show()
            .and_then(|()| w.unminimize())
            .and_then(|()| w.set_focus())
    {
        tracing::warn!(error = %e, "cannot show the main window");
    }
}

/// The tray's Pause submenu: (menu id, label, `memory_pause`'s `for`).
const PAUSE_CHOICES: [(&str, &str, &str); 4] = [
    ("pause-15m", "15 minutes", "15m"),
    ("pause-1h", "1 hour", "1h"),
    ("pause-tomorrow", "Until tomorrow", "tomorrow"),
    ("pause-until-resumed", "Until resumed", "until_resumed"),
];

/// The `memory_pause` request a tray menu id stands for, if it is a Pause choice.
fn pause_request(id: &str) -> Option<MemoryPauseReq> {
    PAUSE_CHOICES
        .iter()
        .find(|(menu_id, _, _)| *menu_id == id)
        .map(|(_, _, length)| MemoryPauseReq {
            duration: Some((*length).to_owned()),
            until: None,
        })
}

/// A time as the tray shows it: local, "14:30" today, "tomorrow 00:00", else with the date.
fn local_time(rfc3339: &str, now: chrono::DateTime<chrono::Local>) -> String {
    let Ok(at) = chrono::DateTime::parse_from_rfc3339(rfc3339) else {
        return rfc3339.to_owned();
    };
    let at = at.with_timezone(&chrono::Local);
    let days = (at.date_naive() - now.date_naive()).num_days();
    match days {
        0 => at.format("%H:%M").to_string(),
        1 => at.format("tomorrow %H:%M").to_string(),
        _ => at.format("%Y-%m-%d %H:%M").to_string(),
    }
}

/// The tray's tooltip for a memory state (unknown: the service did not answer).
fn tray_tooltip(memory: Option<&MemoryState>, now: chrono::DateTime<chrono::Local>) -> String {
    match memory {
        None => "Cairn".to_owned(),
        Some(m) if m.enabled => "Cairn — memory on".to_owned(),
        Some(m) if m.paused => match m.paused_until.as_deref() {
            Some(until) => format!("Cairn — memory paused until {}", local_time(until, now)),
            None => "Cairn — memory paused until resumed".to_owned(),
        },
        Some(_) => "Cairn — memory off".to_owned(),
    }
}

async fn memory_state(backend: &SharedBackend) -> Option<MemoryState> {
    backend
        .call_typed::<_, MemoryState>("memory_get", &serde_json::json!({}))
        .await
        .ok()
}

/// The tray items that follow the memory state.
#[derive(Clone)]
struct TrayState {
    tray: TrayIcon<tauri::Wry>,
    /// "Memory on" / "Memory paused until …" / "Memory off" (disabled: a label).
    state: MenuItem<tauri::Wry>,
    resume: MenuItem<tauri::Wry>,
    icon: Option<tauri::image::Image<'static>>,
    dimmed: Option<tauri::image::Image<'static>>,
}

impl TrayState {
    /// Shows a memory state: the state line, Resume enabled when memory is not on, the
    /// tooltip (and title, where the platform shows one) with the pause's end, and the icon
    /// dimmed while memory is paused or off.
    fn show(&self, memory: Option<&MemoryState>) {
        let tooltip = tray_tooltip(memory, chrono::Local::now());
        let on = memory.is_none_or(|m| m.enabled);
        let line = tooltip.trim_start_matches("Cairn — ");
        let mut line = line.to_owned();
        if let Some(first) = line.get(..1) {
            line = first.to_uppercase() + &line[1..];
        }
        let results = [
            self.state.set_text(&line),
            self.resume.set_enabled(!on),
            self.tray.set_tooltip(Some(&tooltip)),
            self.tray.set_icon(if on {
                self.icon.clone()
            } else {
                self.dimmed.clone()
            }),
        ];
        for r in results {
            if let Err(e) = r {
                tracing::warn!(error = %e, "cannot update the tray");
            }
        }
    }
}

/// The icon at 40% opacity: the tray's sign that memory is paused or off.
fn dimmed(icon: &tauri::image::Image<'_>) -> tauri::image::Image<'static> {
    let mut rgba = icon.rgba().to_vec();
    for px in rgba.chunks_exact_mut(4) {
        px[3] = (u16::from(px[3]) * 2 / 5) as u8;
    }
    tauri::image::Image::new_owned(rgba, icon.width(), icon.height())
}

fn build_tray(app: &tauri::App, backend: SharedBackend) -> tauri::Result<()> {
    let open = MenuItem::with_id(app, "open", "Open Cairn", true, None::<&str>)?;
    let state = MenuItem::with_id(app, "state", "Memory on", false, None::<&str>)?;
    let choices = PAUSE_CHOICES
        .iter()
        .map(|(id, label, _)| MenuItem::with_id(app, *id, *label, true, None::<&str>))
        .collect::<tauri::Result<Vec<_>>>()?;
    let choice_refs: Vec<&dyn tauri::menu::IsMenuItem<tauri::Wry>> = choices
        .iter()
        .map(|c| c as &dyn tauri::menu::IsMenuItem<tauri::Wry>)
        .collect();
    let pause = Submenu::with_id_and_items(app, "pause", "Pause memory", true, &choice_refs)?;
    let resume = MenuItem::with_id(app, "resume", "Resume memory", false, None::<&str>)?;
    let clear = MenuItem::with_id(app, "clear", "Clear memory…", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Cairn", true, None::<&str>)?;
    let sep1 = PredefinedMenuItem::separator(app)?;
    let sep2 = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(
        app,
        &[&open, &state, &pause, &resume, &sep1, &clear, &sep2, &quit],
    )?;
    let icon = app.default_window_icon().map(|i| i.clone().to_owned());
    let mut tray = TrayIconBuilder::with_id("cairn")
        .tooltip("Cairn")
        .menu(&menu);
    if let Some(icon) = &icon {
        tray = tray.icon(icon.clone());
    }
    let b = backend.clone();
    let tray = tray
        .on_menu_event(move |app, event| match event.id.as_ref() {
            "open" => show_main(app),
            "resume" => {
                let b = b.clone();
                let app = app.clone();
                tauri::async_runtime::spawn(async move {
                    match b
                        .call_typed::<_, MemoryState>("memory_set", &MemorySetReq { enabled: true })
                        .await
                    {
                        Ok(state) => show_memory(&app, Some(&state)),
                        Err(e) => tracing::warn!(error = %e, "cannot resume memory from the tray"),
                    }
                });
            }
            "clear" => {
                show_main(app);
                // The window asks for confirmation before anything is cleared.
                if let Err(e) = app.emit_to("main", "cairn://clear-requested", ()) {
                    tracing::warn!(error = %e, "cannot ask the window to confirm Clear");
                }
            }
            "quit" => {
                let b = b.clone();
                let app = app.clone();
                tauri::async_runtime::spawn(async move {
                    b.close().await;
                    app.exit(0);
                });
            }
            id => {
                if let Some(req) = pause_request(id) {
                    let b = b.clone();
                    let app = app.clone();
                    tauri::async_runtime::spawn(async move {
                        match b.call_typed::<_, MemoryState>("memory_pause", &req).await {
                            Ok(state) => show_memory(&app, Some(&state)),
                            Err(e) => {
                                tracing::warn!(error = %e, "cannot pause memory from the tray");
                            }
                        }
                    });
                }
            }
        })
        .build(app)?;
    let shown = TrayState {
        tray,
        state,
        resume,
        dimmed: icon.as_ref().map(dimmed),
        icon,
    };
    app.manage(shown.clone());

    // Keep the tray in step with the memory state, whoever changes it (the window, the CLI,
    // a pause that ends by itself).
    tauri::async_runtime::spawn(async move {
        let mut last: Option<Option<MemoryState>> = None;
        loop {
            let now = memory_state(&backend).await;
            if last.as_ref() != Some(&now) {
                shown.show(now.as_ref());
                last = Some(now);
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    });
    Ok(())
}

/// Shows a memory state in the tray at once (the poll would, within two seconds).
fn show_memory(app: &tauri::AppHandle, memory: Option<&MemoryState>) {
    if let Some(tray) = app.try_state::<TrayState>() {
        tray.show(memory);
    }
}

fn main() -> std::process::ExitCode {
    // Before any thread starts (see the function).
    cairn_api::cap_malloc_arenas();
    let paths = match Paths::from_env() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cairn-desktop: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let loaded = match Settings::load(&paths, &Overrides::default(), std::env::vars()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cairn-desktop: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let _log = match cairn_api::logging::init(&paths, &loaded.settings, "desktop", "warn") {
        Ok(g) => g,
        Err(e) => {
            eprintln!(
                "cairn-desktop: cannot open the log dir {}: {e}",
                paths.logs.display()
            );
            return std::process::ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("cairn")
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cairn-desktop: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    tauri::async_runtime::set(runtime.handle().clone());
    let opts = ServiceOptions {
        paths,
        settings: loaded.settings,
        config_file: loaded.file,
        host: Host::Desktop,
        serve_http: true,
        ui_dir: None,
    };
    let backend = match runtime.block_on(Backend::host(opts)) {
        Ok(b) => SharedBackend::new(b),
        Err(e) => {
            eprintln!("cairn-desktop: {e}");
            return std::process::ExitCode::from(4);
        }
    };
    let start_hidden = std::env::args().any(|a| a == "--minimized");
    let on_exit = backend.clone();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            show_main(app)
        }))
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            Some(vec!["--minimized"]),
        ))
        .manage(backend.clone())
        .invoke_handler(tauri::generate_handler![rpc])
        .setup(move |app| {
            build_tray(app, backend.clone())?;
            if start_hidden && let Some(w) = app.get_webview_window("main") {
                w.hide()?;
            }
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the window keeps Cairn running in the tray; Quit is in the tray menu.
            if let WindowEvent::CloseRequested { api, .. } = event
                && window.app_handle().tray_by_id("cairn").is_some()
                && std::env::var_os("CAIRN_DESKTOP_QUIT_ON_CLOSE").is_none()
            {
                api.prevent_close();
                if let Err(e) = window.hide() {
                    tracing::warn!(error = %e, "cannot hide the window");
                }
            }
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("cairn-desktop: cannot start the window: {e}");
            runtime.block_on(on_exit.close());
            return std::process::ExitCode::from(1);
        }
    };
    app.run(move |_app, event| {
        if let RunEvent::Exit = event {
            tauri::async_runtime::block_on(on_exit.close());
        }
    });
    std::process::ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn state(enabled: bool, paused: bool, until: Option<&str>) -> MemoryState {
        MemoryState {
            enabled,
            changed_at: None,
            paused,
            paused_until: until.map(str::to_owned),
        }
    }

    #[test]
    fn tray_pause_choices_ask_for_the_right_pause() {
        let lengths: Vec<_> = PAUSE_CHOICES
            .iter()
            .map(|(id, _, _)| pause_request(id).and_then(|r| r.duration))
            .collect();
        assert_eq!(
            lengths,
            ["15m", "1h", "tomorrow", "until_resumed"].map(|l| Some(l.to_owned()))
        );
        assert!(pause_request("resume").is_none());
        assert!(pause_request("quit").is_none());
    }

    #[test]
    fn tray_tooltip_says_paused_and_until_when() {
        let now = chrono::Local
            .with_ymd_and_hms(2026, 12, 2, 10, 0, 0)
            .earliest()
            .unwrap_or_else(chrono::Local::now);
        let at = |h, m, d| {
            chrono::Local
                .with_ymd_and_hms(2026, 12, d, h, m, 0)
                .earliest()
                .map(|t| t.to_rfc3339())
                .unwrap_or_default()
        };
        assert_eq!(tray_tooltip(None, now), "Cairn");
        assert_eq!(
            tray_tooltip(Some(&state(true, false, None)), now),
            "Cairn — memory on"
        );
        assert_eq!(
            tray_tooltip(Some(&state(false, false, None)), now),
            "Cairn — memory off"
        );
        assert_eq!(
            tray_tooltip(Some(&state(false, true, Some(&at(10, 15, 2)))), now),
            "Cairn — memory paused until 10:15"
        );
        assert_eq!(
            tray_tooltip(Some(&state(false, true, Some(&at(0, 0, 3)))), now),
            "Cairn — memory paused until tomorrow 00:00"
        );
        assert_eq!(
            tray_tooltip(Some(&state(false, true, Some(&at(9, 0, 9)))), now),
            "Cairn — memory paused until 2026-12-09 09:00"
        );
        assert_eq!(
            tray_tooltip(Some(&state(false, true, None)), now),
            "Cairn — memory paused until resumed"
        );
    }
}
