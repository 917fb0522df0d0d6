//! Whole episodes through [`WorldEnv`] with hand-written model outputs.

use std::sync::Arc;

use super::*;
use crate::messages::Role;
use crate::row::parse_jsonl;

const SCREEN: &str = "user@sandbox:~$ ";
const LS: &str = r#"[{"keystrokes": "ls\n", "duration": 0.5}]"#;

fn terminal_env(max_steps: usize) -> WorldEnv {
    let mut env = WorldEnv::new(EnvConfig {
        max_steps,
        ..EnvConfig::default()
    });
    let mut task = Task::new("t-1", Domain::Terminal, Some(SCREEN.into()));
    task.instruction = "list the files".into();
    let first = env.reset(task);
    assert_eq!(first.text, SCREEN);
    assert_eq!(first.state.as_ref().unwrap().format, "terminal");
    env
}

fn query(env: &mut WorldEnv, action: &str) -> Vec<Message> {
    match env.act(action).unwrap() {
        Act::Query(m) => m,
        Act::Finished(s) => panic!("finished early: {s:?}"),
    }
}

#[test]
fn a_terminal_episode_builds_the_benchmark_messages_and_row() {
    let mut env = terminal_env(8);
    let m1 = query(&mut env, LS);
    assert_eq!(m1.len(), 2);
    assert_eq!(m1[0].role, Role::System);
    assert!(m1[0].content.contains("Terminal World Model"));
    assert_eq!(
        m1[1].content,
        format!("### Turn 1\n**Action:**\n```json\n{LS}\n```\n\n**Current State:**\n{SCREEN}")
    );
    assert!(env.act(LS).is_err(), "a step is pending");
    let out = "<think>ls lists one file</think>\n<predicted_observation>\nuser@sandbox:~$ ls\nnotes.txt\nuser@sandbox:~$\n</predicted_observation>";
    let step = env.observe(out).unwrap();
    assert_eq!(
        step.observation.text,
        "user@sandbox:~$ ls\nnotes.txt\nuser@sandbox:~$"
    );
    assert!(step.info.well_formed && !step.done && step.reward == 0.0);
    assert!(step.observation.state.is_some());
    let lines = step.lines.as_ref().unwrap();
    assert!(lines.iter().any(|l| l.text == "notes.txt"), "{lines:?}");
    assert!(env.observe(out).is_err(), "nothing pending");

    let m2 = query(
        &mut env,
        r#"[{"keystrokes": "cat notes.txt\n", "duration": 0.5}]"#,
    );
    assert_eq!(m2.len(), 4);
    assert_eq!(
        m2[2].content,
        "**Environment Observation:**\nuser@sandbox:~$ ls\nnotes.txt\nuser@sandbox:~$"
    );
    assert!(m2[3].content.starts_with("### Turn 2\n") && !m2[3].content.contains("Current State"));
    // An unclosed block with text around it: extracted all the same, not well formed.
    let step = env.observe("sure: <predicted_observation>\nhello").unwrap();
    assert_eq!(step.observation.text, "hello");
    assert!(!step.info.well_formed);

    let Act::Finished(last) = env.act("[]").unwrap() else {
        panic!("[] finishes a terminal episode");
    };
    assert_eq!(last.info.done_reason, Some(DoneReason::Finished));
    assert!(env.act(LS).unwrap_err().to_string().contains("is over"));
    assert_eq!(env.records().len(), 3);

    let row = env.to_row();
    let mut text = Vec::new();
    crate::row::write_jsonl([&row], &mut text).unwrap();
    let back = parse_jsonl(std::str::from_utf8(&text).unwrap()).unwrap();
    assert_eq!(back[0], row);
    assert_eq!((row.turn_idx, row.total_turns, row.prompt.len()), (2, 2, 2));
    assert_eq!(row.task, "terminal");
    // Replaying the row's last turn asks exactly what the env asked.
    assert_eq!(row.messages().unwrap(), m2);
    assert_eq!(row.extra["steps"].as_array().unwrap().len(), 3);
    assert_eq!(row.extra["done_reason"], "finished");
    assert_eq!(row.extra["instruction"], "list the files");
}

#[test]
fn the_step_limit_ends_the_episode() {
    let mut env = terminal_env(1);
    query(&mut env, LS);
    let step = env
        .observe("<predicted_observation>x</predicted_observation>")
        .unwrap();
    assert!(step.done);
    assert_eq!(env.done(), Some(DoneReason::StepLimit));
}

#[test]
fn a_failed_call_is_recorded_and_the_row_asks_for_that_turn() {
    let mut env = terminal_env(8);
    let asked = query(&mut env, LS);
    let step = env.fail("http://127.0.0.1:9 answered HTTP 503 (3 attempts)");
    assert!(step.done && step.info.error.as_deref().unwrap().contains("503"));
    assert_eq!(step.observation.text, SCREEN);
    let row = env.to_row();
    assert_eq!(
        (row.prompt.len(), row.response.len(), row.turn_idx),
        (1, 0, 1)
    );
    assert_eq!(row.messages().unwrap(), asked);
    assert!(row.target().is_err());
    assert_eq!(row.extra["done_reason"], "failed");
    assert_eq!(row.extra["steps"][0]["error"], step.info.error.unwrap());
}

#[test]
fn invalid_actions_are_sent_as_written_and_penalised() {
    let rules = RewardRules::from_json(
        r#"{"rules": [{"name": "listed", "when": [{"observation_contains": "notes.txt"}], "reward": 1}]}"#,
    )
    .unwrap();
    let mut env = WorldEnv::new(EnvConfig {
        rewards: Arc::new(rules),
        ..EnvConfig::default()
    });
    env.reset(Task::new("t", Domain::Terminal, None));
    let m = query(&mut env, "ls please");
    assert!(
        m[1].content.contains("```json\nls please\n```") && !m[1].content.contains("Current State")
    );
    let step = env
        .observe("<predicted_observation>notes.txt</predicted_observation>")
        .unwrap();
    assert!(step.info.action_error.is_some());
    assert_eq!(
        step.reward, 0.0,
        "-1 invalid, +1 listed: {:?}",
        step.reward_parts
    );
    assert_eq!(step.reward_parts.len(), 2);
    assert_eq!(env.total_reward(), 0.0);
}

#[test]
fn android_steps_get_a_structural_diff_and_target_warnings() {
    let before = r#"<hierarchy rotation="0"><node index="0" text="" resource-id="com.x:id/root" class="android.widget.FrameLayout" bounds="[0,0][100,100]"><node index="0" text="Wi-Fi" resource-id="com.x:id/wifi" class="android.widget.Switch" checked="false" clickable="true" bounds="[0,0][100,50]"/></node></hierarchy>"#;
    let after = before.replace("checked=\"false\"", "checked=\"true\"");
    let mut env = WorldEnv::new(EnvConfig::default());
    env.reset(Task::new("a", Domain::Android, Some(before.into())));
    let Act::Query(_) = env.act(r#"{"action_type": "click", "index": 7}"#).unwrap() else {
        panic!("a click is not finishing");
    };
    let step = env
        .observe(&format!(
            "<predicted_observation>{after}</predicted_observation>"
        ))
        .unwrap();
    assert!(
        step.info.warnings.iter().any(|w| w.contains("index 7")),
        "{:?}",
        step.info.warnings
    );
    let diff = step.diff.unwrap();
    assert_eq!(diff.changes.len(), 1, "{diff:?}");
    assert!(step.lines.is_none());
    let Act::Finished(_) = env
        .act(r#"{"action_type": "status", "goal_status": "complete"}"#)
        .unwrap()
    else {
        panic!("status finishes");
    };
}

#[test]
fn policy_messages_follow_the_steps() {
    let mut env = terminal_env(8);
    query(&mut env, LS);
    env.observe("<predicted_observation>a.txt</predicted_observation>")
        .unwrap();
    env.last_record_mut().unwrap().policy_output = Some(format!("```json\n{LS}\n```"));
    let m = env.policy_messages("SYS");
    let roles: Vec<Role> = m.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    assert!(
        m[1].content
            .starts_with("Task: list the files\n\nCurrent state:\n")
    );
    assert!(m[2].content.starts_with("```json"));
    assert_eq!(m[3].content, "Observation:\na.txt");
}

#[test]
fn an_env_that_was_never_reset_refuses_steps() {
    let mut env = WorldEnv::new(EnvConfig::default());
    assert!(env.act(LS).is_err());
    assert!(env.observe("x").is_err());
}

#[test]
fn a_patch_form_world_model_gets_full_states_in_its_history_and_diffs() {
    let page = "RootWebArea 'Newsletter', focused\n\t[12] heading 'Join'\n\t[13] textbox 'Full name'\n\t[14] button 'Subscribe'\n";
    let mut env = WorldEnv::new(EnvConfig {
        observation_forms: [(Domain::Web, ObservationForm::Patch)].into(),
        ..EnvConfig::default()
    });
    env.reset(Task::new("w", Domain::Web, Some(page.into())));
    let Act::Query(_) = env.act("fill('13', 'Ada')").unwrap() else {
        panic!("fill is not finishing");
    };
    let step = env
        .observe("<predicted_observation>\n\t[13] textbox 'Full name', value='Ada'\n</predicted_observation>")
        .unwrap();
    let next = page.replace("'Full name'", "'Full name', value='Ada'");
    assert_eq!(step.observation.text, next);
    assert!(step.info.well_formed);
    assert_eq!(step.diff.unwrap().changes.len(), 1);
    // The next turn's model call sees the full state, as the training rows hold it.
    let Act::Query(messages) = env.act("click('14')").unwrap() else {
        panic!("click is not finishing");
    };
    assert!(messages.iter().any(|m| m.content.contains(&next)));
    // A patch line that matches nothing is reported and makes the output malformed.
    let step = env
        .observe("<predicted_observation>\nzzz\n</predicted_observation>")
        .unwrap();
    assert_eq!(step.observation.text, next);
    assert!(!step.info.well_formed);
    assert!(
        step.info
            .warnings
            .iter()
            .any(|w| w.contains("patch line 1")),
        "{:?}",
        step.info.warnings
    );
    // The same output from a full-form model is the state as written.
    let mut full = WorldEnv::new(EnvConfig::default());
    full.reset(Task::new("w", Domain::Web, Some(page.into())));
    full.act("fill('13', 'Ada')").unwrap();
    let step = full
        .observe("<predicted_observation>\n\t[13] textbox 'Full name', value='Ada'\n</predicted_observation>")
        .unwrap();
    assert!(!step.observation.text.contains("Subscribe"));
}
