//! The built-in site: page families written as code, varied per row with made-up names,
//! labels and values from small word lists (one list set for training, one held out).

use super::page::{Browser, Node, Page, Target};
use crate::rng::Rng;

/// Word lists that vary the built-in pages and the typed values.
#[derive(Debug)]
pub(crate) struct Words {
    pub first: &'static [&'static str],
    pub last: &'static [&'static str],
    pub company: &'static [&'static str],
    pub product: &'static [&'static str],
    pub adjective: &'static [&'static str],
    pub city: &'static [&'static str],
    pub phrase: &'static [&'static str],
}

impl Words {
    /// Every list, for word sets ([`crate::rename::word_set`]).
    pub(crate) fn lists(&self) -> [&'static [&'static str]; 7] {
        [
            self.first,
            self.last,
            self.company,
            self.product,
            self.adjective,
            self.city,
            self.phrase,
        ]
    }
}

/// Training words.
pub(crate) const TRAIN_WORDS: Words = Words {
    first: &[
        "Ana", "Ben", "Chloe", "Dmitri", "Elif", "Farid", "Greta", "Hiro", "Ines", "Jonas",
        "Kemal", "Lena", "Marco", "Nadia", "Oskar", "Priya",
    ],
    last: &[
        "Lopez", "Schmidt", "Okafor", "Tanaka", "Novak", "Rossi", "Berg", "Haddad", "Kowalski",
        "Silva", "Moreau", "Jensen",
    ],
    company: &[
        "Brightleaf",
        "Northwind",
        "Pinecrest",
        "Bluepeak",
        "Coralbay",
        "Ironwood",
        "Sunmill",
        "Greyfox",
    ],
    product: &[
        "Lamp",
        "Kettle",
        "Backpack",
        "Notebook",
        "Headphones",
        "Mug",
        "Blanket",
        "Chair",
        "Umbrella",
        "Scarf",
        "Toaster",
        "Planter",
    ],
    adjective: &[
        "Compact", "Classic", "Urban", "Cozy", "Modern", "Sturdy", "Vintage", "Bright",
    ],
    city: &[
        "Lisbon", "Oslo", "Denver", "Osaka", "Lyon", "Perth", "Krakow", "Austin",
    ],
    phrase: &[
        "hello there",
        "please call me back",
        "order 4471 is late",
        "great service",
        "need a refund",
        "see you soon",
        "blue and green",
        "question about shipping",
    ],
};

/// Held-out words: no training row uses them.
pub(crate) const TEST_WORDS: Words = Words {
    first: &[
        "Quinn", "Rosa", "Sven", "Talia", "Ugo", "Vera", "Wim", "Yara",
    ],
    last: &[
        "Andersen", "Brennan", "Castillo", "Dubois", "Eriksen", "Ferrari",
    ],
    company: &["Maplestone", "Redcliff", "Silverlake", "Windmere"],
    product: &["Teapot", "Satchel", "Easel", "Lantern", "Rucksack", "Stool"],
    adjective: &["Rustic", "Sleek", "Nordic", "Handmade"],
    city: &["Quito", "Tallinn", "Hobart", "Seville"],
    phrase: &[
        "running ten minutes late",
        "window seat please",
        "birthday dinner",
        "allergic to nuts",
    ],
};

/// A family of built-in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// A contact form: text fields, a select, checkboxes, a disabled field, a submit button.
    Contact,
    /// A settings form: checkboxes, a select, a prefilled field, a save button.
    Settings,
    /// A list of items with links to detail pages.
    List,
    /// A small shop: home → products → product pages, an about page.
    Shop,
    /// A table booking form (held out).
    Booking,
}

/// Families used for training rows.
pub(crate) const TRAIN_FAMILIES: [Family; 4] = [
    Family::Contact,
    Family::Settings,
    Family::List,
    Family::Shop,
];
/// Families used only for held-out rows.
pub(crate) const TEST_FAMILIES: [Family; 1] = [Family::Booking];

impl Family {
    /// The row's `source`.
    pub(crate) fn source(self) -> &'static str {
        match self {
            Family::Contact => "builtin:contact",
            Family::Settings => "builtin:settings",
            Family::List => "builtin:list",
            Family::Shop => "builtin:shop",
            Family::Booking => "builtin:booking",
        }
    }
}

fn pick(rng: &mut Rng, items: &'static [&'static str]) -> &'static str {
    rng.pick(items).copied().unwrap_or("")
}

/// `k` distinct items, in random order.
fn some(rng: &mut Rng, items: &[&'static str], k: usize) -> Vec<&'static str> {
    let mut v = items.to_vec();
    rng.shuffle(&mut v);
    v.truncate(k.max(1));
    v
}

/// A person's name from the words.
pub(crate) fn person(rng: &mut Rng, w: &Words) -> String {
    format!("{} {}", pick(rng, w.first), pick(rng, w.last))
}

/// A value to type into a field named `label`.
pub(crate) fn value_for(label: &str, rng: &mut Rng, w: &Words) -> String {
    let l = label.to_ascii_lowercase();
    if l.contains("email") {
        format!(
            "{}.{}@{}.com",
            pick(rng, w.first).to_ascii_lowercase(),
            pick(rng, w.last).to_ascii_lowercase(),
            pick(rng, w.company).to_ascii_lowercase()
        )
    } else if l.contains("phone") {
        format!("555-{:04}", rng.below(10_000))
    } else if l.contains("name") {
        person(rng, w)
    } else if l.contains("city") {
        pick(rng, w.city).to_string()
    } else {
        pick(rng, w.phrase).to_string()
    }
}

fn textbox(depth: usize, name: &str) -> Node {
    Node {
        value: Some(String::new()),
        ..Node::new(depth, "textbox", name)
    }
}

fn checkbox(depth: usize, name: &str, checked: bool) -> Node {
    Node {
        checked: Some(checked),
        ..Node::new(depth, "checkbox", name)
    }
}

/// A combobox and its options, the first (or a random one) selected.
fn select(depth: usize, name: &str, options: &[&str], selected: usize) -> Vec<Node> {
    let sel = options
        .get(selected)
        .or(options.first())
        .copied()
        .unwrap_or("");
    let mut v = vec![Node {
        value: Some(sel.to_string()),
        ..Node::new(depth, "combobox", name)
    }];
    for o in options {
        v.push(Node {
            checked: Some(*o == sel),
            ..Node::new(depth + 1, "option", *o)
        });
    }
    v
}

fn link(depth: usize, name: &str, to: usize) -> Node {
    Node {
        target: Target::Page(to),
        ..Node::new(depth, "link", name)
    }
}

fn button(name: &str, disabled: bool) -> Node {
    Node {
        target: Target::Submit,
        disabled,
        ..Node::new(0, "button", name)
    }
}

/// Groups of nodes (a field and its options stay together) shuffled, then flattened.
fn shuffled(rng: &mut Rng, mut groups: Vec<Vec<Node>>) -> Vec<Node> {
    rng.shuffle(&mut groups);
    groups.concat()
}

/// Builds a family's pages, numbers them and opens the first.
pub(crate) fn build(family: Family, rng: &mut Rng, w: &Words) -> Browser {
    let company = pick(rng, w.company);
    let mut pages = match family {
        Family::Contact => vec![contact(rng, w, company)],
        Family::Settings => vec![settings(rng, w, company)],
        Family::Booking => vec![booking(rng, w, company)],
        Family::List => list(rng, w, company),
        Family::Shop => shop(rng, w, company),
    };
    for p in &mut pages {
        let base = 1 + rng.below(40);
        let mut r = rng.clone();
        p.assign_bids(base, || r.chance(0.2));
        rng.next_u64();
    }
    Browser::new(pages)
}

fn prefill(rng: &mut Rng, w: &Words, mut n: Node) -> Node {
    if rng.chance(0.2) {
        n.value = Some(value_for(&n.name, rng, w));
    }
    n
}

fn contact(rng: &mut Rng, w: &Words, company: &str) -> Page {
    let mut groups = Vec::new();
    let k = 2 + rng.below(2);
    for label in some(rng, &["Name", "Email", "Phone", "Message"], k) {
        groups.push(vec![prefill(rng, w, textbox(0, label))]);
    }
    let topics = some(
        rng,
        &["Billing", "Support", "Sales", "Feedback", "Returns"],
        3,
    );
    groups.push(select(0, "Topic", &topics, rng.below(3)));
    let k = 1 + rng.below(2);
    for label in some(rng, &["Subscribe to newsletter", "I agree to the terms"], k) {
        groups.push(vec![checkbox(0, label, rng.chance(0.3))]);
    }
    if rng.chance(0.5) {
        let mut n = textbox(0, "Account ID");
        n.value = Some(format!("AC-{}", 100 + rng.below(900)));
        n.disabled = true;
        groups.push(vec![n]);
    }
    let mut nodes = vec![Node::new(0, "heading", format!("Contact {company}"))];
    nodes.extend(shuffled(rng, groups));
    nodes.push(button("Send", rng.chance(0.25)));
    Page {
        title: format!("{company} - Contact"),
        nodes,
    }
}

fn settings(rng: &mut Rng, w: &Words, company: &str) -> Page {
    let mut groups = Vec::new();
    let labels = [
        "Dark mode",
        "Email alerts",
        "Auto-save",
        "Two-factor login",
        "Show tips",
    ];
    let k = 2 + rng.below(3);
    for (i, label) in some(rng, &labels, k).into_iter().enumerate() {
        let mut n = checkbox(0, label, rng.chance(0.5));
        n.disabled = i == 0 && rng.chance(0.3);
        groups.push(vec![n]);
    }
    let langs = some(
        rng,
        &["English", "French", "German", "Spanish", "Polish"],
        3,
    );
    groups.push(select(0, "Language", &langs, rng.below(3)));
    let mut name = textbox(0, "Display name");
    name.value = Some(person(rng, w));
    groups.push(vec![name]);
    let mut nodes = vec![Node::new(0, "heading", "Settings")];
    nodes.extend(shuffled(rng, groups));
    nodes.push(button("Save", rng.chance(0.2)));
    Page {
        title: format!("{company} - Settings"),
        nodes,
    }
}

fn booking(rng: &mut Rng, w: &Words, company: &str) -> Page {
    let mut groups = vec![
        vec![prefill(rng, w, textbox(0, "Guest name"))],
        vec![textbox(0, "Phone")],
    ];
    let times = some(rng, &["18:00", "18:30", "19:00", "19:30", "20:00"], 3);
    groups.push(select(0, "Time", &times, 0));
    let guests = some(rng, &["1", "2", "3", "4", "5", "6"], 3);
    groups.push(select(0, "Guests", &guests, rng.below(3)));
    for label in some(rng, &["Outdoor seating", "High chair", "Quiet table"], 2) {
        groups.push(vec![checkbox(0, label, rng.chance(0.3))]);
    }
    let mut nodes = vec![Node::new(0, "heading", "Book a table")];
    nodes.extend(shuffled(rng, groups));
    nodes.push(button("Confirm", rng.chance(0.25)));
    Page {
        title: format!("{company} - Booking"),
        nodes,
    }
}

/// A detail page for an item, with a link back to page `back`.
fn detail(rng: &mut Rng, w: &Words, item: &str, back: (&str, usize)) -> Page {
    let mut nodes = vec![
        Node::new(0, "heading", item),
        Node::new(0, "StaticText", format!("Price: ${}", 5 + rng.below(120))),
    ];
    if rng.chance(0.5) {
        nodes.push(Node::new(
            0,
            "StaticText",
            format!("Ships from {}", pick(rng, w.city)),
        ));
    }
    let mut cart = Node::new(0, "button", "Add to cart");
    cart.disabled = rng.chance(0.5);
    nodes.push(cart);
    nodes.push(link(0, back.0, back.1));
    Page {
        title: item.to_string(),
        nodes,
    }
}

fn items(rng: &mut Rng, w: &Words, k: usize) -> Vec<String> {
    let adj = some(rng, w.adjective, k);
    let prod = some(rng, w.product, k);
    adj.iter()
        .zip(&prod)
        .map(|(a, p)| format!("{a} {p}"))
        .collect()
}

fn list(rng: &mut Rng, w: &Words, company: &str) -> Vec<Page> {
    let k = 3 + rng.below(3);
    let names = items(rng, w, k);
    let mut nodes = vec![Node::new(0, "heading", format!("{company} catalog"))];
    nodes.push(Node::new(0, "list", ""));
    for (i, name) in names.iter().enumerate() {
        nodes.push(Node::new(1, "listitem", ""));
        nodes.push(link(2, name, i + 1));
    }
    let mut more = Node::new(0, "button", "Load more");
    more.disabled = rng.chance(0.6);
    nodes.push(more);
    let mut pages = vec![Page {
        title: format!("{company} - Catalog"),
        nodes,
    }];
    for name in &names {
        pages.push(detail(rng, w, name, ("Back to catalog", 0)));
    }
    pages
}

fn shop(rng: &mut Rng, w: &Words, company: &str) -> Vec<Page> {
    let k = 2 + rng.below(3);
    let names = items(rng, w, k);
    let home = Page {
        title: format!("{company} - Home"),
        nodes: vec![
            Node::new(0, "heading", format!("Welcome to {company}")),
            Node::new(0, "navigation", ""),
            link(1, "Products", 1),
            link(1, "About us", 2),
            Node::new(
                0,
                "StaticText",
                format!(
                    "{} goods since {}",
                    pick(rng, w.adjective),
                    1950 + rng.below(70)
                ),
            ),
        ],
    };
    let mut prod = vec![Node::new(0, "heading", "Products")];
    for (i, name) in names.iter().enumerate() {
        prod.push(link(0, name, 3 + i));
    }
    prod.push(link(0, "Home", 0));
    let about = Page {
        title: format!("{company} - About"),
        nodes: vec![
            Node::new(0, "heading", format!("About {company}")),
            Node::new(
                0,
                "StaticText",
                format!("A small shop in {}.", pick(rng, w.city)),
            ),
            link(0, "Home", 0),
        ],
    };
    let mut pages = vec![
        home,
        Page {
            title: format!("{company} - Products"),
            nodes: prod,
        },
        about,
    ];
    for name in &names {
        pages.push(detail(rng, w, name, ("Products", 1)));
    }
    pages
}
