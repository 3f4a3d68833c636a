//! The loopback HTTP API: `POST /api/rpc/{method}` with a bearer token, `GET /api/health`
//! without one, and the built web UI at `/`.
//!
//! The token is made fresh for each run and reaches clients through `service.json` (mode
//! 0600 in the runtime dir) or, for the browser, the fragment of the printed UI address.
//!
//! Every request, the health check and the UI included, must name the service itself in its
//! `Host` (`127.0.0.1:<port>`, `localhost:<port>` or `[::1]:<port>`), so a web page whose
//! domain was re-pointed at 127.0.0.1 (DNS rebinding) is refused; a request carrying an
//! `Origin` must come from the UI this service serves. Both refusals are 403 with a
//! `{code, message}` body. The health check also tells who answers: the run's instance id
//! (written to `service.json`) and, given a `challenge`, a proof that the answering process
//! knows the token ([`health_proof`]), so a client never hands the token to an impostor.
//!
//! Every response carries [`CONTENT_SECURITY_POLICY`] (the UI's scripts, styles and calls
//! only from this service, never framed), `X-Frame-Options: DENY`,
//! `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer` (the UI's address
//! carries the token in its fragment).
use std::path::PathBuf;

use axum::Json;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use cairn_core::ErrorCode;
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use crate::{ApiError, Service};

#[derive(Clone)]
struct AppState {
    service: Service,
    token: std::sync::Arc<str>,
    instance: std::sync::Arc<str>,
}

/// A fresh random token (256 bits, hex).
pub fn fresh_token() -> Result<String, ApiError> {
    let mut buf = [0u8; 32];
    getrandom::fill(&mut buf)
        .map_err(|e| ApiError::internal(format!("no randomness for the token: {e}")))?;
    Ok(hex::encode(buf))
}

/// A fresh random instance id (128 bits, hex): names one run of the service in
/// `service.json` and in `GET /api/health`.
pub fn fresh_instance_id() -> Result<String, ApiError> {
    let mut buf = [0u8; 16];
    getrandom::fill(&mut buf)
        .map_err(|e| ApiError::internal(format!("no randomness for the instance id: {e}")))?;
    Ok(hex::encode(buf))
}

/// The `Content-Security-Policy` of every response. The built UI is one module script and
/// one stylesheet from this service, and sets styles only through the CSS object model
/// (Svelte's `style:` directives), so neither inline scripts nor inline styles are allowed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Adds the security headers to a response (those a route set itself are kept).
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
    ] {
        if !headers.contains_key(&name) {
            headers.insert(name, header::HeaderValue::from_static(value));
        }
    }
    response
}

/// The longest `challenge` the health check answers.
pub const MAX_CHALLENGE_LEN: usize = 128;

/// The proof that the process answering the health check knows the token, without showing
/// it: HMAC-SHA256 keyed with the token over the client's random `challenge`, in hex. An
/// instance id alone could be replayed by a process that read it from an earlier health
/// check and took the port after the service died; a fresh challenge cannot.
pub fn health_proof(token: &str, challenge: &str) -> String {
    const BLOCK: usize = 64;
    let mut key = [0u8; BLOCK];
    if token.len() > BLOCK {
        key[..32].copy_from_slice(&Sha256::digest(token.as_bytes()));
    } else {
        key[..token.len()].copy_from_slice(token.as_bytes());
    }
    let pad = |byte: u8| key.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(b"cairn-health:")
        .chain_update(challenge.as_bytes())
        .finalize();
    hex::encode(
        Sha256::new()
            .chain_update(pad(0x5c))
            .chain_update(inner)
            .finalize(),
    )
}

/// What `GET /api/health` answers.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Health {
    /// Always true: the service answers.
    pub ok: bool,
    /// This run's instance id, as written to `service.json` (absent from older services).
    #[serde(default)]
    pub instance: Option<String>,
    /// [`health_proof`] of the request's `challenge`, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct HealthQuery {
    challenge: Option<String>,
}

async fn health(State(state): State<AppState>, Query(query): Query<HealthQuery>) -> Response {
    let proof = match query.challenge {
        Some(c) if c.is_empty() || c.len() > MAX_CHALLENGE_LEN => {
            return ApiError::bad_request(format!(
                "the health check's challenge must be 1 to {MAX_CHALLENGE_LEN} characters"
            ))
            .into_response();
        }
        Some(c) => Some(health_proof(&state.token, &c)),
        None => None,
    };
    Json(Health {
        ok: true,
        instance: Some(state.instance.to_string()),
        proof,
    })
    .into_response()
}

/// Whether `value` (a `Host` header or a URL's authority) names this service: one of the
/// loopback forms with its own port.
fn is_own_authority(value: &str, port: u16) -> bool {
    let Some((host, given_port)) = value.rsplit_once(':') else {
        return false;
    };
    given_port == port.to_string()
        && (host == "127.0.0.1" || host == "[::1]" || host.eq_ignore_ascii_case("localhost"))
}

/// Why a request is refused before it reaches a route, if it is: a `Host` (or a URI
/// authority) that is not this service's loopback address, or an `Origin` other than the UI
/// this service serves.
fn refusal(headers: &HeaderMap, uri: &Uri, port: u16) -> Option<String> {
    let allowed = format!("127.0.0.1:{port}, localhost:{port} or [::1]:{port}");
    let mut hosts = headers.get_all(header::HOST).iter();
    match (hosts.next(), hosts.next()) {
        (None, _) => {
            return Some(format!(
                "refused: the request has no Host header; Cairn answers only requests addressed to {allowed}"
            ));
        }
        (Some(_), Some(_)) => {
            return Some("refused: the request has more than one Host header".to_owned());
        }
        (Some(host), None) => {
            let host = host.to_str().unwrap_or("");
            if !is_own_authority(host, port) {
                return Some(format!(
                    "refused: the Host header {host:?} is not this service's address ({allowed}); \
                     Cairn refuses other names so a web page cannot reach it by re-pointing its domain at this machine (DNS rebinding)"
                ));
            }
        }
    }
    if let Some(authority) = uri.authority()
        && !is_own_authority(authority.as_str(), port)
    {
        return Some(format!(
            "refused: the request is addressed to {authority}, not to this service ({allowed})"
        ));
    }
    let mut origins = headers.get_all(header::ORIGIN).iter();
    match (origins.next(), origins.next()) {
        (None, _) => None,
        (Some(_), Some(_)) => {
            Some("refused: the request has more than one Origin header".to_owned())
        }
        (Some(origin), None) => {
            let origin = origin.to_str().unwrap_or("");
            let own = origin
                .strip_prefix("http://")
                .is_some_and(|rest| is_own_authority(rest, port));
            (!own).then(|| {
                format!(
                    "refused: requests from the web page at {origin:?} are not allowed; only Cairn's own UI \
                     (http://127.0.0.1:{port}, http://localhost:{port} or http://[::1]:{port}) may call this \
                     service from a browser"
                )
            })
        }
    }
}

async fn guard(State(port): State<u16>, request: Request, next: Next) -> Response {
    match refusal(request.headers(), request.uri(), port) {
        None => next.run(request).await,
        Some(message) => {
            // Debug, not warn: a hostile page could repeat these without end.
            tracing::debug!(%message, uri = %request.uri(), "refused a request");
            ApiError::new(ErrorCode::Forbidden, message).into_response()
        }
    }
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

/// Serves until `shutdown` turns true. `instance` is this run's id (as in `service.json`).
pub async fn serve(
    service: Service,
    listener: tokio::net::TcpListener,
    token: String,
    instance: String,
    ui_dir: Option<PathBuf>,
    mut shutdown: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let port = listener.local_addr()?.port();
    let state = AppState {
        service,
        token: token.into(),
        instance: instance.into(),
    };
    let api = axum::Router::new()
        .route("/api/health", get(health))
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
    // Last, so they wrap every route, the UI fallback and the guard's refusals.
    let app = app
        .layer(axum::middleware::from_fn_with_state(port, guard))
        .layer(axum::middleware::map_response(security_headers));
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

/// Finds the built web UI: the `service.ui_dir` setting when set (it must be an absolute
/// path), else the UI installed with the program: `ui/` beside it, `../share/cairn/ui`
/// (an install prefix) or `../Resources/ui` (a macOS bundle). Never the current directory:
/// whatever folder Cairn happens to be started from must not decide the page it serves
/// with the token. Use `cairn daemon --ui-dir` for a checkout's `ui/dist`.
pub fn find_ui_dir(settings: &cairn_config::Settings) -> Result<Option<PathBuf>, ApiError> {
    if !settings.service.ui_dir.is_empty() {
        let dir = PathBuf::from(&settings.service.ui_dir);
        if !dir.is_absolute() {
            return Err(ApiError::bad_request(format!(
                "service.ui_dir must be an absolute path, not {:?}: a relative one would depend on the folder Cairn is started from",
                settings.service.ui_dir
            )));
        }
        return Ok(Some(dir));
    }
    let Ok(exe) = std::env::current_exe() else {
        return Ok(None);
    };
    Ok(ui_dirs_beside(&exe)
        .into_iter()
        .find(|d| d.join("index.html").is_file()))
}

/// Where an installed UI may sit, for the program at `exe`.
pub fn ui_dirs_beside(exe: &std::path::Path) -> Vec<PathBuf> {
    let Some(bin) = exe.parent() else {
        return Vec::new();
    };
    let mut dirs = vec![bin.join("ui")];
    if let Some(prefix) = bin.parent() {
        dirs.push(prefix.join("share/cairn/ui"));
        dirs.push(prefix.join("Resources/ui"));
    }
    dirs
}
