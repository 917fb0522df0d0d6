#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

pub mod config;
pub mod error;
pub mod metrics;
pub mod output;
pub mod request;
mod routes;
pub mod scheduler;
pub mod stop;
pub mod testing;
pub mod tools;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::routing::{get, post};

pub use config::ServeConfig;
pub use error::{ApiError, Result, ServeError};
pub use scheduler::{EngineHandle, ModelInfo, ModelText, StepBatch};

/// Largest request body accepted (a long conversation, not a file upload).
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The engine thread.
    pub engine: EngineHandle,
}

/// The OpenAI-compatible routes over a running engine.
pub fn router(engine: EngineHandle) -> Router {
    router_with_web(engine, None)
}

/// [`router`], plus the files of `web` (the web playground, `web/dist`) at `/` for every
/// `GET` the API routes do not take.
pub fn router_with_web(engine: EngineHandle, web: Option<PathBuf>) -> Router {
    let web = web.map(Arc::new);
    let fallback = move |method: Method, uri: Uri| {
        let web = web.clone();
        async move {
            match web {
                Some(root) => routes::files::handle(root, method, uri).await,
                None => routes::info::not_found(uri).await,
            }
        }
    };
    Router::new()
        .route("/v1/chat/completions", post(routes::chat::handle))
        .route("/v1/completions", post(routes::completions::handle))
        .route("/v1/models", get(routes::info::models))
        .route("/health", get(routes::info::health))
        .route("/metrics", get(routes::info::metrics))
        .fallback(fallback)
        .method_not_allowed_fallback(routes::info::method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(Arc::new(AppState { engine }))
}

/// Serves [`router`] on `listener` until `shutdown` completes.
///
/// # Errors
/// [`ServeError::Io`] if the socket fails.
pub async fn serve(
    listener: tokio::net::TcpListener,
    engine: EngineHandle,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    serve_router(listener, router(engine), shutdown).await
}

/// Serves `router` (from [`router`] or [`router_with_web`]) on `listener` until `shutdown`
/// completes.
///
/// # Errors
/// [`ServeError::Io`] if the socket fails.
pub async fn serve_router(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|source| ServeError::Io {
            context: "serving HTTP".into(),
            source,
        })
}
