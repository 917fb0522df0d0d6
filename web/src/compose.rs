//! The left column: the state (example, upload, paste) and the action (quick builders per
//! domain, or the raw text, checked with the world layer's action parser as you type).

use agentworld_world::Domain;
use agentworld_world::action::{check_targets, parse_action};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::json;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::HtmlInputElement;

use crate::ctx::Ctx;
use crate::examples;

/// A Python string literal for `s` (single quotes).
fn py_str(s: &str) -> String {
    format!(
        "'{}'",
        s.replace('\\', "\\\\")
            .replace('\'', "\\'")
            .replace('\n', "\\n")
    )
}

/// The target JSON of the selected Android node (from the tap action a click made).
fn selected_android_target(ctx: Ctx) -> Option<serde_json::Value> {
    let a: serde_json::Value = serde_json::from_str(&ctx.action.get_untracked()).ok()?;
    a.get("target").cloned()
}

/// The bid in the current action (`click('12')` → `12`).
fn selected_bid(ctx: Ctx) -> Option<String> {
    let a = ctx.action.get_untracked();
    let start = a.find('\'')? + 1;
    let end = start + a[start..].find('\'')?;
    Some(a[start..end].to_string())
}

/// Quick builders for `domain`; `text` is the free-text field they share.
fn builders(ctx: Ctx, domain: Domain, text: RwSignal<String>) -> AnyView {
    let set = move |a: String| ctx.action.set(a);
    let b = |label: &'static str, f: Box<dyn Fn() -> String + Send + Sync>| {
        view! { <button class="small" on:click=move |_| set(f())>{label}</button> }
    };
    match domain {
        Domain::Android => view! {
            <p class="hint">"Tap a node on the phone to tap it. Type into the tapped (or focused) field:"</p>
            {b("type", Box::new(move || {
                let mut a = json!({"action": "type", "text": text.get_untracked()});
                if let Some(t) = selected_android_target(ctx) { a["target"] = t; }
                a.to_string()
            }))}
            {b("toggle", Box::new(move || {
                let t = selected_android_target(ctx).unwrap_or(json!(""));
                json!({"action": "toggle", "target": t}).to_string()
            }))}
            {b("scroll ↓", Box::new(|| r#"{"action": "scroll", "direction": "down"}"#.into()))}
            {b("back", Box::new(|| r#"{"action": "back"}"#.into()))}
            {b("home", Box::new(|| r#"{"action": "home"}"#.into()))}
            {b("enter", Box::new(|| r#"{"action": "enter"}"#.into()))}
        }
        .into_any(),
        Domain::Web => view! {
            <p class="hint">"Click an element with a bid (in the DOM tree) to click it. With the text below:"</p>
            {b("fill", Box::new(move || format!("fill('{}', {})", selected_bid(ctx).unwrap_or_default(), py_str(&text.get_untracked()))))}
            {b("goto", Box::new(move || format!("goto({})", py_str(&text.get_untracked()))))}
            {b("scroll ↓", Box::new(|| "scroll(0, 400)".into()))}
            {b("back", Box::new(|| "go_back()".into()))}
            {b("noop", Box::new(|| "noop()".into()))}
        }
        .into_any(),
        Domain::Os => view! {
            <p class="hint">"Click the desktop to click there. With the text below:"</p>
            {b("type", Box::new(move || format!("pyautogui.typewrite({})", py_str(&text.get_untracked()))))}
            {b("ctrl+s", Box::new(|| "pyautogui.hotkey('ctrl', 's')".into()))}
            {b("enter", Box::new(|| "pyautogui.press('enter')".into()))}
        }
        .into_any(),
        _ => view! {
            <p class="hint">"A command (Enter is added):"</p>
            {b("run command", Box::new(move || json!([{"keystrokes": format!("{}\n", text.get_untracked()), "duration": 1.0}]).to_string()))}
            {b("Ctrl-C", Box::new(|| r#"[{"keystrokes": "C-c", "duration": 0.5}]"#.into()))}
            {b("wait", Box::new(|| r#"[{"keystrokes": "", "duration": 5.0}]"#.into()))}
        }
        .into_any(),
    }
}

/// State and action controls.
#[component]
pub fn Composer() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let text = RwSignal::new(String::new());
    let check = Memo::new(move |_| {
        let domain = ctx.domain.get();
        let action = ctx.action.get();
        if action.trim().is_empty() {
            return (true, String::new());
        }
        match parse_action(domain, &action) {
            Ok(a) => {
                let state = ctx.state.get();
                let warnings = agentworld_world::state::Registry::standard()
                    .parse("auto", &state)
                    .map(|p| check_targets(&a, &p.tree))
                    .unwrap_or_default();
                (true, warnings.join("; "))
            }
            Err(e) => (false, format!("{e} (it is sent as written)")),
        }
    });
    let on_upload = move |ev: leptos::ev::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        spawn_local(async move {
            match JsFuture::from(file.text()).await {
                Ok(t) => {
                    ctx.state.set(t.as_string().unwrap_or_default());
                    ctx.selected.set(None);
                }
                Err(_) => ctx.error.set(Some(format!("cannot read {}", file.name()))),
            }
        });
    };
    view! {
        <h2>"1 · State"</h2>
        <div class="row">
            <select data-testid="example" on:change=move |ev| {
                if let Ok(i) = event_target_value(&ev).parse::<usize>() { ctx.load_example(i); }
            }>
                <option value="">"example…"</option>
                {move || examples::of(ctx.domain.get()).map(|(i, e)| view! { <option value=i.to_string()>{e.label}</option> }).collect_view()}
            </select>
            <label class="button small">"upload" <input type="file" class="hidden" on:change=on_upload /></label>
        </div>
        <details class="state-text">
            <summary>{move || format!("state text ({} lines; paste or edit)", ctx.state.with(|s| s.lines().count()))}</summary>
            <textarea data-testid="state" rows="10" prop:value=move || ctx.state.get() on:change=move |ev| ctx.state.set(event_target_value(&ev))></textarea>
        </details>
        <h2>"2 · Action"</h2>
        {move || builders(ctx, ctx.domain.get(), text)}
        <input class="wide" placeholder="text for type / fill / goto / command" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev)) />
        <textarea data-testid="action" rows="3" prop:value=move || ctx.action.get() on:input=move |ev| ctx.action.set(event_target_value(&ev))></textarea>
        {move || {
            let (ok, msg) = check.get();
            (!msg.is_empty()).then(|| view! { <p class=if ok { "note" } else { "note bad" }>{msg}</p> })
        }}
        <details class="system">
            <summary>"system prompt and sampling"</summary>
            <textarea rows="8" prop:value=move || ctx.system.get() on:change=move |ev| ctx.system.set(event_target_value(&ev))></textarea>
            <label>"temperature " <input type="number" step="0.1" min="0" max="2" prop:value=move || ctx.temperature.get().to_string()
                on:change=move |ev| ctx.temperature.set(event_target_value(&ev).parse().unwrap_or(0.0)) /></label>
            <label>" max tokens " <input type="number" min="1" prop:value=move || ctx.max_tokens.get().to_string()
                on:change=move |ev| ctx.max_tokens.set(event_target_value(&ev).parse().unwrap_or(1024)) /></label>
        </details>
        <h2>"3 · Run"</h2>
    }
}
