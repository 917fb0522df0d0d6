//! Static files: the web playground (`web/dist`, built by trunk) at `/`, for `GET` and
//! `HEAD` on any path the API routes do not take. Only files inside the folder are served
//! (no `..`, no absolute paths, no hidden files); a folder serves its `index.html`.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::info::{method_not_allowed, not_found};

/// The media type of a file, by extension.
fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "md" | "jinja" | "tsv" | "jsonl" | "xml" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// `%XX` escapes decoded; `None` when the result is not UTF-8 or holds a NUL.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if i + 2 >= b.len() {
                return None;
            }
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).ok()?;
    (!s.contains('\0')).then_some(s)
}

/// The file under `root` that `uri_path` names, when it is a safe relative path.
pub fn resolve(root: &Path, uri_path: &str) -> Option<PathBuf> {
    let decoded = percent_decode(uri_path)?;
    let rel = Path::new(decoded.trim_start_matches('/'));
    let mut out = root.to_path_buf();
    for c in rel.components() {
        match c {
            Component::Normal(part) if !part.to_string_lossy().starts_with('.') => out.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if out.is_dir() {
        out.push("index.html");
    }
    out.is_file().then_some(out)
}

/// Serves a file of the web folder `root`, or the API's 404 / 405.
pub async fn handle(root: Arc<PathBuf>, method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return method_not_allowed(method, uri).await;
    }
    let Some(path) = resolve(&root, uri.path()) else {
        return not_found(uri).await;
    };
    // std::fs on the blocking pool (tokio's `fs` feature is not enabled in this workspace).
    let read = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || std::fs::read(path)).await
    };
    match read.unwrap_or_else(|e| Err(std::io::Error::other(e))) {
        Ok(bytes) => {
            let mut resp = if method == Method::HEAD {
                Response::new(Body::empty())
            } else {
                Response::new(Body::from(bytes))
            };
            let headers = resp.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(&path)),
            );
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            headers.insert(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            );
            resp
        }
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("reading {}: {e}", path.display()),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_inside_the_root() {
        let dir = tempfile_dir();
        std::fs::write(dir.join("index.html"), "<p>hi").unwrap();
        std::fs::create_dir(dir.join("a")).unwrap();
        std::fs::write(dir.join("a/x y.js"), "1").unwrap();
        std::fs::write(dir.join(".secret"), "s").unwrap();
        assert_eq!(resolve(&dir, "/"), Some(dir.join("index.html")));
        assert_eq!(resolve(&dir, "/a/x%20y.js"), Some(dir.join("a/x y.js")));
        for bad in [
            "/../etc/passwd",
            "/a/../../x",
            "/.secret",
            "/%2e%2e/x",
            "/nope",
            "/a/%zz",
            "/%00",
        ] {
            assert_eq!(resolve(&dir, bad), None, "{bad}");
        }
        assert_eq!(content_type(Path::new("m.wasm")), "application/wasm");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("aw-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
