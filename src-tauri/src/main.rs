//! # cairn-desktop
//!
//! The desktop shell: the main window with the UI, the tray menu (Open, Pause/Resume memory,
//! Clear…, Quit), single instance and launch at login. It hosts the service in-process
//! (or, when a `cairn daemon` already owns the store, becomes its client) and exposes one
//! Tauri command, `rpc`, that forwards to cairn-api's dispatch table. No logic lives here.
#![cfg_attr(
    all(not(debug_assertions), target_os = "windows"),
    windows_subsystem = "windows"
)]

use std::time::Duration;

use cairn_api::{Backend, Host, ServiceOptions, SharedBackend};
use cairn_config::{Overrides, Paths, Settings};
use cairn_core::api::{ApiErrorBody, MemorySetReq, MemoryState};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
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

fn pause_label(enabled: bool) -> &'static str {
    if enabled {
        "Pause memory"
    } else {
        "Resume memory"
    }
}

async fn memory_enabled(backend: &SharedBackend) -> Option<bool> {
    let status = backend.call("status", serde_json::json!({})).await.ok()?;
    status["memory"]["enabled"].as_bool()
}

fn set_pause_label(item: &MenuItem<tauri::Wry>, enabled: bool) {
    if let Err(e) = item.set_text(pause_label(enabled)) {
        tracing::warn!(error = %e, "cannot update the tray menu");
    }
}

fn build_tray(app: &tauri::App, backend: SharedBackend) -> tauri::Result<()> {
    let open = MenuItem::with_id(app, "open", "Open Cairn", true, None::<&str>)?;
    let pause = MenuItem::with_id(app, "pause", pause_label(true), true, None::<&str>)?;
    let clear = MenuItem::with_id(app, "clear", "Clear memory…", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Cairn", true, None::<&str>)?;
    let sep1 = PredefinedMenuItem::separator(app)?;
    let sep2 = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&open, &pause, &sep1, &clear, &sep2, &quit])?;
    let mut tray = TrayIconBuilder::with_id("cairn")
        .tooltip("Cairn")
        .menu(&menu);
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    let b = backend.clone();
    let pause_item = pause.clone();
    tray.on_menu_event(move |app, event| match event.id.as_ref() {
        "open" => show_main(app),
        "pause" => {
            let b = b.clone();
            let pause_item = pause_item.clone();
            tauri::async_runtime::spawn(async move {
                let enabled = memory_enabled(&b).await.unwrap_or(true);
                match b
                    .call_typed::<_, MemoryState>("memory_set", &MemorySetReq { enabled: !enabled })
                    .await
                {
                    Ok(state) => set_pause_label(&pause_item, state.enabled),
                    Err(e) => tracing::warn!(error = %e, "cannot switch memory from the tray"),
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
        _ => {}
    })
    .build(app)?;

    // Keep the Pause/Resume label in step with the switch, whoever flips it.
    tauri::async_runtime::spawn(async move {
        let mut shown = Some(true);
        loop {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let now = memory_enabled(&backend).await;
            if now.is_some() && now != shown {
                if let Some(enabled) = now {
                    set_pause_label(&pause, enabled);
                }
                shown = now;
            }
        }
    });
    Ok(())
}

fn main() -> std::process::ExitCode {
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
