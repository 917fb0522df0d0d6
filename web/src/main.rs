//! Entry point: mounts the playground.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(agentworld_web::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the playground runs in a browser: build it with `trunk build` in web/");
}
