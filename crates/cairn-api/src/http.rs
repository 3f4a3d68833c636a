//! The loopback HTTP API: `POST /api/rpc/{method}` with a bearer token, `GET /api/health`
//! without one, and the built web UI at `/`.
//!
//! The token is made fresh for each run and reaches clients through `service.json` (mode
//! 0600 in the runtime dir) or, for the browser, the fragment of the printed UI address.
use std::path::PathBuf;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use cairn_core::ErrorCode;
use tokio::sync::watch;

use crate::{ApiError, Service};

#[derive(Clone)]
struct AppState {
    service: Service,
    token: std::sync::Arc<str>,
}

/// A fresh random token (256 bits, hex).
pub fn fresh_token() -> Result<String, ApiError> {
    let mut buf = [0u8; 32];
    getrandom::fill(&mut buf)
        .map_err(|e| ApiError::internal(format!("no randomness for the token: {e}")))?;
    Ok(hex::encode(buf))
}

/// The HTTP status of each error kind.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::BadRequest => StatusCode::BAD_REQUEST,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::Conflict => StatusCode::CONFLICT,
        ErrorCode::MemoryOff | ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (status_of(self.code), Json(self.body())).into_response()
    }
}

/// Serves until `shutdown` turns true.
pub async fn serve(
    service: Service,
    listener: tokio::net::TcpListener,
    token: String,
    ui_dir: Option<PathBuf>,
    mut shutdown: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let state = AppState {
        service,
        token: token.into(),
    };
    let api = axum::Router::new()
        .route(
            "/api/health",
            get(|| async { Json(serde_json::json!({ "ok": true })) }),
        )
        .route("/api/rpc/{method}", post(rpc))
        .with_state(state);
    let app = match ui_dir.filter(|d| d.join("index.html").is_file()) {
        Some(dir) => {
            let index = dir.join("index.html");
            api.fallback_service(
                tower_http::services::ServeDir::new(&dir)
                    .fallback(tower_http::services::ServeFile::new(index)),
            )
        }
        None => api.fallback(get(no_ui)),
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            while !*shutdown.borrow() {
                if shutdown.changed().await.is_err() {
                    break;
                }
            }
        })
        .await
}

async fn no_ui() -> impl IntoResponse {
    (
        StatusCode::NOT_FOUND,
        Html(
            "<!doctype html><title>Cairn</title><h1>Cairn is running</h1>\
             <p>The web UI is not built. Run <code>npm run app</code> from the Cairn checkout, \
             or set <code>service.ui_dir</code> to a built UI folder.</p>",
        ),
    )
}

fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ") else {
        return false;
    };
    // Constant-time comparison.
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

async fn rpc(
    State(state): State<AppState>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if !authorized(&headers, &state.token) {
        return ApiError::new(
            ErrorCode::Unauthorized,
            "missing or wrong token: use the address printed by `cairn daemon` (it carries the token), or the token in service.json",
        )
        .into_response();
    }
    let params = if body.is_empty() {
        serde_json::Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return ApiError::bad_request(format!("the request body is not JSON: {e}"))
                    .into_response();
            }
        }
    };
    match state.service.dispatch(&method, params).await {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

/// Finds the built web UI: the `service.ui_dir` setting when set, else `ui/dist` in the
/// current directory or beside the program (walking up from it), else an installed
/// `share/cairn/ui`.
pub fn find_ui_dir(settings: &cairn_config::Settings) -> Option<PathBuf> {
    if !settings.service.ui_dir.is_empty() {
        return Some(PathBuf::from(&settings.service.ui_dir));
    }
    let mut candidates = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        candidates.push(cwd.join("ui/dist"));
    }
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(6) {
            candidates.push(dir.join("ui/dist"));
            candidates.push(dir.join("share/cairn/ui"));
        }
    }
    candidates
        .into_iter()
        .find(|d| d.join("index.html").is_file())
}
