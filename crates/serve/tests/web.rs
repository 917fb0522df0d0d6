//! The web playground's files at `/` beside the API (`router_with_web`).

mod common;

use std::sync::Arc;
use std::time::Duration;

use agentworld_serve::EngineHandle;
use agentworld_serve::testing::{Script, ScriptedBatch};
use common::{config, demo_text, listen_router};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_beside_the_api() {
    let dir = std::env::temp_dir().join(format!("aw-web-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("pkg")).unwrap();
    std::fs::write(dir.join("index.html"), "<!DOCTYPE html><p>playground").unwrap();
    std::fs::write(dir.join("pkg/app.wasm"), b"\0asm").unwrap();
    let script: Script = Arc::new(|_: &[u32]| vec!["ok".to_string()]);
    let engine = EngineHandle::spawn_batch(
        demo_text(),
        ScriptedBatch::new(script, Duration::ZERO),
        &config(2, 4),
    )
    .unwrap();
    let s = listen_router(agentworld_serve::router_with_web(engine, Some(dir.clone()))).await;

    let resp = s.client.get(format!("{}/", s.base)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
    assert!(resp.text().await.unwrap().contains("playground"));
    let resp = s
        .client
        .get(format!("{}/pkg/app.wasm", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "application/wasm");
    // The API is unchanged; what is not a file is the API's JSON 404.
    assert_eq!(s.get("/v1/models").await.0, 200);
    let (status, body) = s.get("/nope.js").await;
    assert_eq!(status, 404);
    assert!(body.contains("not_found"), "{body}");
    assert_eq!(s.get("/%2e%2e/Cargo.toml").await.0, 404);
    let resp = s
        .client
        .post(format!("{}/index.html", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    let _ = std::fs::remove_dir_all(&dir);
}
