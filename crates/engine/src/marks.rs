//! What the world layer tells the decoder about a prompt ([`PromptMarks`]): where the copy
//! prior copies from (the lines the action names, the current state and what continues it),
//! the markers written for the model alone, and the reasoning's first line written for it.
//! [`encode_prompt_marks`] is the one place every caller gets them from.

use crate::error::Result;

/// Where in a prompt's tokens the copy prior copies from, and how firmly: the lines of the
/// current state that its action names ([`crate::sampling::CopyPrior::named`]) and
/// the state itself with what continues it ([`crate::sampling::CopyPrior::sources`]).
/// Made by [`encode_prompt_marks`]; the default marks nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptMarks {
    /// Token ranges of the prompt (`[start, end)`) holding the lines the action names and,
    /// where the domain's observations are patches, the text the action types
    /// (`agentworld_world::action::typed_in_prompt`).
    pub named: Vec<std::ops::Range<usize>>,
    /// The bonus (nats) for the copy's continuation on [`Self::named`], in place of
    /// `copy_bias` (the card's `named_copy_bias_by_domain`); `None`: those lines are copied
    /// as firmly as the rest.
    pub named_bias: Option<f32>,
    /// `Some`: the copy follows only these token ranges (the current state, whole tokens;
    /// the card's `copy_sources_by_domain` says `state`). `Some` of nothing: the domain copies
    /// its state only but the prompt has none, so no copy prior runs. `None`: the whole
    /// prompt may be copied.
    pub sources: Option<Vec<std::ops::Range<usize>>>,
    /// Tokens that continue the copy where [`Self::sources`] end: the rest of the state's
    /// text after its last whole token, then what the shell echoes of the typed command
    /// (`agentworld_world::action::CopySources::echo`), cut before any special token.
    pub then: Vec<u32>,
    /// Prompt positions (token indices, ascending) of the markers the world layer wrote for
    /// the model alone (the card's `line_marker_by_domain`): the copy prior and the loop
    /// guard read the prompt without them, so a marked line is copied as if unmarked.
    pub inserted: Vec<usize>,
    /// The output edits the named lines and does not write one back unchanged: the domain's
    /// observations are patches (the card's `observation_form_by_domain`;
    /// [`crate::sampling::CopyPrior::edits_named`]).
    pub edits_named: bool,
}

/// Which bonus [`encode_prompt_marks`] gives the lines an action names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NamedBias {
    /// The card's `named_copy_bias_by_domain` for the prompt's domain.
    Card,
    /// None: the named lines are copied as firmly as the rest (a caller that sets its own
    /// `copy_bias` and no named bias).
    Off,
    /// This many nats.
    Nats(f32),
}

/// Tokenizes a rendered world-model prompt of `domain` (`None`: the domain named by the
/// system prompt's "You are a X World Model", `Domain::from_system_prompt`) and marks where
/// the copy prior copies from ([`PromptMarks`]):
/// - with a named bias (`named_bias`) and a state format for the domain in `card`, the lines of
///   the current state the action names (`agentworld_world::action::named_in_prompt`);
/// - where `card` copies the domain's state only (`copy_sources_by_domain`), the state
///   (`agentworld_world::action::copy_sources_in_prompt`) as whole tokens, and what continues
///   it.
///
/// - for a card's `target_in_thinking` domain, where the prompt ends with the opened
///   reasoning, the ids end with the reasoning's first line, written for the model
///   ([`thinking_lead`]).
///
/// The one place where `eval fidelity`, `simulate`, `agentworld serve`'s chat requests, the
/// rollout's local world and the browser worker get their marks. Without a card or a domain,
/// nothing is marked.
///
/// # Errors
/// [`crate::EngineError::Text`] on tokenizer failure.
pub fn encode_prompt_marks(
    tokenizer: &agentworld_text::Tokenizer,
    card: Option<&crate::ModelCard>,
    text: &str,
    domain: Option<agentworld_world::Domain>,
    named_bias: NamedBias,
) -> Result<(Vec<u32>, PromptMarks)> {
    let (mut ids, marks) = encode_marks(tokenizer, card, text, domain, named_bias)?;
    if let Some(lead) = thinking_lead(card, text, domain) {
        ids.extend(tokenizer.encode(&lead)?);
    }
    Ok((ids, marks))
}

/// What the engine writes at the top of the reasoning for a card's `target_in_thinking`
/// domains (`agentworld_world::action::target_lead`), where `text` ends with the opened
/// reasoning; `None` elsewhere. Tokenized apart from the prompt, as training tokenizes the
/// completion apart from it.
pub fn thinking_lead(
    card: Option<&crate::ModelCard>,
    text: &str,
    domain: Option<agentworld_world::Domain>,
) -> Option<String> {
    let card = card?;
    let domain = domain.or_else(|| agentworld_world::Domain::from_system_prompt(text))?;
    let d = domain.as_str();
    if !text.ends_with("<think>\n") || !card.target_in_thinking.iter().any(|x| x == d) {
        return None;
    }
    agentworld_world::action::target_lead(text, domain, card.state_formats.get(d)?)
}

/// The prompt as the model reads it: for a card's `line_marker_by_domain` domain (`None`:
/// the domain the system prompt names), `text` with the marker at the start of each line
/// the action names (`agentworld_world::action::mark_named_in_prompt`); `None` where no
/// marker applies (no card, no such domain or format, nothing named). Training
/// (`agentworld_train::dataset::build_examples`) and [`encode_prompt_marks`] both mark
/// through it, so a model reads at decoding what it was trained on.
pub fn marked_prompt(
    card: Option<&crate::ModelCard>,
    text: &str,
    domain: Option<agentworld_world::Domain>,
) -> Option<agentworld_world::action::MarkedPrompt> {
    let card = card?;
    let domain = domain.or_else(|| agentworld_world::Domain::from_system_prompt(text))?;
    let d = domain.as_str();
    let marker = card.line_marker_for(d)?;
    let marked = agentworld_world::action::mark_named_in_prompt(
        text,
        domain,
        card.state_formats.get(d)?,
        marker,
    );
    (!marked.markers.is_empty()).then_some(marked)
}

fn encode_marks(
    tokenizer: &agentworld_text::Tokenizer,
    card: Option<&crate::ModelCard>,
    text: &str,
    domain: Option<agentworld_world::Domain>,
    named_bias: NamedBias,
) -> Result<(Vec<u32>, PromptMarks)> {
    use agentworld_world::{Domain, action};
    let (Some(card), Some(domain)) = (card, domain.or_else(|| Domain::from_system_prompt(text)))
    else {
        return Ok((tokenizer.encode(text)?, PromptMarks::default()));
    };
    let d = domain.as_str();
    let named_bias = match named_bias {
        NamedBias::Card => card.named_copy_bias_for(Some(d)),
        NamedBias::Off => None,
        NamedBias::Nats(b) => Some(b),
    };
    let patch =
        card.observation_form_for(Some(d)) == agentworld_world::diff::ObservationForm::Patch;
    // Offsets below are in the text the model reads (markers included).
    let marked = marked_prompt(Some(card), text, Some(domain));
    let map = |r: std::ops::Range<usize>| match &marked {
        Some(m) => m.map(r.start)..m.map(r.end),
        None => r,
    };
    let model_text = marked.as_ref().map_or(text, |m| m.text.as_str());
    let named: Vec<std::ops::Range<usize>> = match (named_bias, card.state_formats.get(d)) {
        (Some(_), Some(format)) => {
            let mut named = action::named_in_prompt(text, domain, format);
            if patch && !named.is_empty() {
                // What a patch's edited line gains is most often the typed text: it is
                // copied from the action under the same bias.
                named.extend(action::typed_in_prompt(text, domain));
            }
            named.into_iter().map(map).collect()
        }
        _ => Vec::new(),
    };
    let sources = card.copies_state_only(d).then(|| {
        action::copy_sources_in_prompt(text, domain).map(|mut found| {
            found.state = map(found.state);
            found
        })
    });
    if named.is_empty() && sources.is_none() && marked.is_none() {
        let marks = PromptMarks {
            named_bias,
            ..PromptMarks::default()
        };
        return Ok((tokenizer.encode(text)?, marks));
    }
    let (ids, offsets) = tokenizer.encode_with_offsets(model_text)?;
    // The tokens that are exactly a marker (one merged with its neighbours stays copyable).
    let inserted = marked.as_ref().map_or_else(Vec::new, |m| {
        offsets
            .iter()
            .enumerate()
            .filter(|&(_, &(a, b))| b == a + m.marker_len && m.markers.binary_search(&a).is_ok())
            .map(|(i, _)| i)
            .collect()
    });
    let mut marks = PromptMarks {
        named: agentworld_text::token_ranges(&offsets, &named, false),
        named_bias,
        sources: None,
        then: Vec::new(),
        inserted,
        edits_named: patch,
    };
    match sources {
        None => {}
        Some(None) => marks.sources = Some(Vec::new()),
        Some(Some(found)) => {
            let ranges =
                agentworld_text::token_ranges(&offsets, std::slice::from_ref(&found.state), true);
            let covered = ranges
                .last()
                .map_or(found.state.start, |r| offsets[r.end - 1].1)
                .clamp(found.state.start, found.state.end);
            let rest = format!("{}{}", &model_text[covered..found.state.end], found.echo);
            let mut then = if rest.is_empty() {
                Vec::new()
            } else {
                tokenizer.encode(&rest)?
            };
            // Typed text that spells a special token (`<|im_end|>`) is not echoed as one.
            if let Some(cut) = then.iter().position(|&id| tokenizer.is_added(id)) {
                then.truncate(cut);
            }
            marks.sources = Some(ranges);
            marks.then = then;
        }
    }
    Ok((ids, marks))
}
