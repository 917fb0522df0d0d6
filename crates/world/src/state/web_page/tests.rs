use super::html::page_from_html;
use super::*;
use crate::state::StateParser;
use crate::state::formats::AxTree;

/// The real pages of `shared/cases/web/browsergym` as (file name, HTML), when that folder is
/// there.
fn real_pages() -> Vec<(String, String)> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/cases/web/browsergym"
    );
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<std::path::PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| {
            let html = std::fs::read_to_string(p).ok()?;
            Some((p.file_name()?.to_string_lossy().into_owned(), html))
        })
        .collect()
}

#[test]
fn real_pages_fold_to_the_tree() {
    let p = page_from_html(
        "t.html",
        "<html><head><title>T</title><style>x{}</style></head><body><h1>Hi <b>there</b></h1>\
         <label><input type=checkbox checked> Remember me</label><input placeholder='Email' disabled>\
         <select name=s><option>A</option><option selected>B</option></select><a href=x>More</a>\
         <iframe srcdoc=\"<p>In frame</p><input placeholder='Q'>\"></iframe></body></html>",
    )
    .unwrap();
    let mut p = p;
    p.assign_bids(1, || false);
    let text = render(&p);
    assert_eq!(
        text,
        "RootWebArea 'T', focused\n\t[1] heading 'Hi there'\n\t[2] checkbox 'Remember me', checked='true'\n\t[3] textbox 'Email', disabled=True\n\t[4] combobox '', value='B'\n\t\t[5] option 'A'\n\t\t[6] option 'B', selected=True\n\t[7] link 'More'\n\t[8] iframe ''\n\t\tStaticText 'In frame'\n\t\t[a0] textbox 'Q'"
    );
    let parsed = AxTree.parse(&text).unwrap();
    assert!(parsed.warnings.is_empty());
    // empty input is an error naming the page, never a panic
    let err = page_from_html("broken.html", "").err();
    if let Some(e) = err {
        assert!(e.to_string().contains("broken.html"), "{e}");
    }
    for (name, html) in real_pages() {
        let p = page_from_html(&name, &html).unwrap();
        let mut p = p;
        p.assign_bids(1, || false);
        let t = render(&p);
        assert!(AxTree.parse(&t).unwrap().warnings.is_empty(), "{t}");
    }
}

#[test]
fn html_becomes_the_axtree_the_demo_model_reads() {
    let html = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/web/shop.html"
    ))
    .unwrap();
    let text = html_to_axtree("shop.html", &html).unwrap();
    let parsed = AxTree.parse(&text).unwrap();
    assert!(parsed.warnings.is_empty(), "{:?}\n{text}", parsed.warnings);
    assert!(text.starts_with("RootWebArea '"), "{text}");
    assert!(
        text.contains("\t[27] button 'Remove'"),
        "the page's own bids are kept: {text}"
    );
    for role in ["button 'Remove'", "checkbox", "button 'Checkout'"] {
        assert!(text.contains(role), "{role} missing:\n{text}");
    }
}

#[test]
fn a_page_with_browsergym_bids_keeps_them() {
    let html = "<html><head><title>Cart</title></head><body><h1 bid=\"2\">Cart</h1>\
                <button bid=\"27\">Remove</button><select bid=\"30\"><option bid=\"31\">A</option>\
                <option bid=\"32\" selected>B</option></select><a href=x>More</a></body></html>";
    let text = html_to_axtree("cart.html", html).unwrap();
    assert_eq!(
        text,
        "RootWebArea 'Cart', focused\n\t[2] heading 'Cart'\n\t[27] button 'Remove'\n\t[30] combobox '', value='B'\n\t\t[31] option 'A'\n\t\t[32] option 'B', selected=True\n\t[33] link 'More'"
    );
    // Without bids, the page is numbered from 1 as BrowserGym would.
    let plain = html_to_axtree("p.html", "<html><body><button>Go</button></body></html>").unwrap();
    assert!(plain.contains("[1] button 'Go'"), "{plain}");
}
