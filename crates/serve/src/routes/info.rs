//! `GET /v1/models`, `GET /health`, `GET /metrics` and the JSON 404 for anything else.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::AppState;
use crate::error::ApiError;

/// The one model this server serves, OpenAI style.
pub async fn models(State(state): State<Arc<AppState>>) -> Response {
    let info = &state.engine.info;
    state.engine.metrics.request("models", 200);
    axum::Json(json!({"object": "list", "data": [{
        "id": info.name, "object": "model", "created": info.created, "owned_by": "agentworld",
        "root": info.name, "parent": null, "max_model_len": info.max_model_len,
    }]}))
    .into_response()
}

/// 200 while the engine thread runs, 503 once it has stopped.
pub async fn health(State(state): State<Arc<AppState>>) -> Response {
    if state.engine.is_alive() {
        (StatusCode::OK, axum::Json(json!({"status": "ok"}))).into_response()
    } else {
        ApiError::overloaded("The engine has stopped; restart the server.", 5).into_response()
    }
}

/// Prometheus text.
pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let text = state.engine.metrics.render(&state.engine.info.name);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// A JSON 404 naming the routes that exist.
pub async fn not_found(uri: Uri) -> Response {
    ApiError {
        status: StatusCode::NOT_FOUND,
        message: format!(
            "No route {}; this server has POST /v1/chat/completions, POST /v1/completions, \
             GET /v1/models, GET /health and GET /metrics.",
            uri.path()
        ),
        param: None,
        code: Some("not_found"),
        retry_after: None,
    }
    .into_response()
}

/// A JSON 405 for a known route called with the wrong method.
pub async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: format!(
            "{method} is not allowed on {}; the /v1 generation routes take POST, the others GET.",
            uri.path()
        ),
        param: None,
        code: Some("method_not_allowed"),
        retry_after: None,
    }
    .into_response()
}
