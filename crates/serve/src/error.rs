//! Errors: [`ApiError`], what a client sees (an OpenAI-style body with the right status), and
//! [`ServeError`], what can stop the server itself.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use thiserror::Error;

/// A request that cannot be served, answered as OpenAI does:
/// `{"error": {"message", "type", "param", "code"}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// What went wrong and what to do about it.
    pub message: String,
    /// The offending request field (`messages[1].role`), when there is one.
    pub param: Option<String>,
    /// A machine-readable code (`model_not_found`, `queue_full`), when there is one.
    pub code: Option<&'static str>,
    /// Seconds after which a retry may succeed (sent as `Retry-After`).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// A 400 about the field `param` (or the request as a whole).
    pub fn bad_request(param: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            param: param.map(str::to_owned),
            code: None,
            retry_after: None,
        }
    }

    /// A 404 for a model this server does not serve.
    pub fn unknown_model(asked: &str, served: &str) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            message: format!(
                "The model `{asked}` does not exist on this server; it serves `{served}` \
                 (see GET /v1/models)."
            ),
            param: Some("model".into()),
            code: Some("model_not_found"),
            retry_after: None,
        }
    }

    /// A 503 telling the client to come back in `secs` seconds.
    pub fn overloaded(message: impl Into<String>, secs: u64) -> Self {
        Self {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.into(),
            param: None,
            code: Some("queue_full"),
            retry_after: Some(secs),
        }
    }

    /// A 500 for a failure of the model or the server.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            param: None,
            code: None,
            retry_after: None,
        }
    }

    /// The OpenAI error type for the status.
    pub fn kind(&self) -> &'static str {
        match self.status.as_u16() {
            400 | 405 | 413 | 422 => "invalid_request_error",
            404 => "not_found_error",
            503 => "server_overloaded",
            _ => "server_error",
        }
    }

    /// The JSON body, also used as a stream's last event.
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {
            "message": self.message,
            "type": self.kind(),
            "param": self.param,
            "code": self.code.map_or_else(|| json!(self.status.as_u16()), |c| json!(c)),
        }})
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// What can keep the server from starting or running.
#[derive(Debug, Error)]
pub enum ServeError {
    /// Loading the model failed.
    #[error(transparent)]
    Engine(#[from] agentworld_engine::EngineError),
    /// Binding or serving the socket failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A setting is out of range.
    #[error("{0}")]
    Config(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, ServeError>;
