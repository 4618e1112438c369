//! Screens of the TUI, drawn with ratatui's TestBackend from synthetic engine events of a
//! ReAct run and a plan_execute run, at 80x24 (compact layout) and 120x40 (wide layout).
//! Each snapshot was reviewed by eye; a change to one is a visible change to review.

mod tui_script;

use b4_agent::protocol::{Event, LoadProgress, LoadStage, Phase, ToolCalling};
use b4_agent::tui::App;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use ratatui::style::{Color, Modifier};
use tui_script::*;

const SMALL: (u16, u16) = (80, 24);
const LARGE: (u16, u16) = (120, 40);

fn both(name: &str, app: &App) {
    assert_snapshot!(format!("{name}_80x24"), screen(app, SMALL.0, SMALL.1));
    assert_snapshot!(format!("{name}_120x40"), screen(app, LARGE.0, LARGE.1));
}

#[test]
fn idle() {
    both("idle", &app());
}

#[test]
fn react_started() {
    both("react_started", &app_with(react(React::Started)));
}

#[test]
fn react_streaming() {
    both("react_streaming", &app_with(react(React::Streaming)));
}

#[test]
fn react_tools_running() {
    both("react_tools_running", &app_with(react(React::ToolsRunning)));
}

#[test]
fn react_tools_done_one_failed() {
    both("react_tools_done", &app_with(react(React::ToolsDone)));
}

#[test]
fn react_final_answer() {
    both("react_final", &app_with(react(React::Final)));
}

#[test]
fn plan_created() {
    both("plan_created", &app_with(plan_run(PlanRun::Planned)));
}

#[test]
fn plan_paused_in_step_mode() {
    both("plan_paused", &app_with(plan_run(PlanRun::Paused)));
}

#[test]
fn plan_step_running() {
    both("plan_running", &app_with(plan_run(PlanRun::Running)));
}

#[test]
fn plan_final_with_a_failed_step() {
    both("plan_final", &app_with(plan_run(PlanRun::Final)));
}

#[test]
fn plan_final_with_results_expanded() {
    let mut app = app_with(plan_run(PlanRun::Final));
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Char('e')));
    assert_snapshot!("plan_final_expanded_120x40", screen(&app, LARGE.0, LARGE.1));
}

#[test]
fn compact_layout_shows_tools_when_focused() {
    let mut app = app_with(react(React::Final));
    // Input -> Messages -> Raw -> Tools.
    for _ in 0..3 {
        app.on_key(key(KeyCode::Tab));
    }
    assert_snapshot!("react_final_tools_focused_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn help_overlay() {
    let mut app = app_with(react(React::Final));
    app.on_key(key(KeyCode::F(1)));
    assert_snapshot!("help_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn profile_picker_while_loading() {
    let mut app = app();
    app.apply(Event::ProfileLoading { name: "qwen-0.5b".into() });
    app.apply(Event::ProfileReady { name: "qwen-0.5b".into(), load_ms: 850.0 });
    app.on_key(key(KeyCode::F(4)));
    app.on_key(key(KeyCode::Down));
    let commands = app.on_key(key(KeyCode::Enter));
    assert_eq!(commands, vec![b4_agent::protocol::Command::SetProfile("qwen-1.5b".into())]);
    app.apply(Event::Settings(b4_agent::protocol::Settings { profile: "qwen-1.5b".into(), ..settings() }));
    app.apply(Event::ProfileLoading { name: "qwen-1.5b".into() });
    // Reopened while the model loads: the picker shows which is loading and which is loaded.
    app.on_key(key(KeyCode::F(4)));
    assert_snapshot!("picker_loading_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn errors_show_as_messages() {
    let mut app = app_with(react(React::Started));
    app.apply(Event::Error {
        message: "model file not found: qwen2.5-coder-0.5b-instruct-q4_k_m.gguf (run `b4 models fetch qwen2.5-coder-0.5b`)"
            .into(),
    });
    app.apply(Event::Finished { reason: b4_agent::protocol::StopReason::BrainError });
    assert_snapshot!("error_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn chinese_multi_line_input_with_cursor() {
    let mut app = app();
    type_text(&mut app, "请总结 docs/agent_intro.txt 的三个要点");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut app, "并用中文回答");
    app.on_key(key(KeyCode::Left));
    app.on_key(key(KeyCode::Left));
    let text = screen(&app, SMALL.0, SMALL.1);
    // The input's rows are screen rows 20 and 21; the cursor sits before 回答: border (1)
    // + "› " (2) + 并用中文 (8 columns).
    assert!(text.ends_with("cursor: (11, 21)\n"), "{text}");
    assert_snapshot!("input_cjk_80x24", text);
}

#[test]
fn messages_scrolled_up_show_what_is_below() {
    let mut app = app_with(plan_run(PlanRun::Final));
    draw(&app, SMALL.0, SMALL.1);
    app.on_key(key(KeyCode::PageUp));
    assert_snapshot!("plan_final_scrolled_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn too_small_terminal_says_so() {
    assert_snapshot!("too_small_20x8", screen(&app(), 20, 8));
}

#[test]
fn resizing_redraws_at_the_new_size() {
    let app = app_with(react(React::Final));
    for (w, h) in [(80, 24), (100, 30), (60, 20), (200, 60), (30, 10)] {
        let text = screen(&app, w, h);
        assert_eq!(text.lines().filter(|l| !l.starts_with("cursor:")).count(), h as usize);
        assert!(text.contains("qwen-0.5b"), "status bar missing at {w}x{h}:\n{text}");
    }
}

#[test]
fn current_plan_step_is_highlighted() {
    let app = app_with(plan_run(PlanRun::Running));
    let buffer = draw(&app, LARGE.0, LARGE.1);
    let text = screen(&app, LARGE.0, LARGE.1);
    let rows: Vec<u16> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains("2. 搜索包含 Agent 的文件 · local_file_search"))
        .map(|(y, _)| y as u16)
        .collect();
    let [row] = rows[..] else { panic!("step 2 should be on one row: {rows:?}") };
    let x = (0..LARGE.0).find(|x| buffer[(*x, row)].symbol() == "搜").expect("step text");
    assert!(buffer[(x, row)].modifier.contains(Modifier::REVERSED), "current step not highlighted");
    let done_row = row - 1;
    let done_x = (0..LARGE.0).find(|x| buffer[(*x, done_row)].symbol() == "✓").expect("done mark");
    assert_eq!(buffer[(done_x, done_row)].fg, Color::Green);
    assert!(!buffer[(done_x, done_row)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn failed_tool_is_red_and_colours_avoid_fixed_white_and_black() {
    let app = app_with(react(React::ToolsDone));
    let buffer = draw(&app, LARGE.0, LARGE.1);
    let failed = buffer.content().iter().find(|c| c.symbol() == "✗").expect("a failed mark");
    assert_eq!(failed.fg, Color::Red);
    for cell in buffer.content() {
        for colour in [cell.fg, cell.bg] {
            assert!(
                !matches!(colour, Color::White | Color::Black | Color::Gray | Color::DarkGray | Color::Rgb(..)),
                "fixed colour {colour:?} on {:?}",
                cell.symbol()
            );
        }
    }
}

/// The status bar: the last row of the screen.
fn status_bar(app: &App, width: u16, height: u16) -> String {
    let text = screen(app, width, height);
    text.lines().rfind(|l| !l.starts_with("cursor:")).unwrap_or_default().trim_end().to_string()
}

#[test]
fn the_status_bar_shows_the_decoding_and_follows_its_toggle() {
    let mut app = app();
    assert_eq!(status_bar(&app, 80, 24), " qwen-0.5b │ react │ prompt_json │ free │ step off │ ready     F1 help  ^C quit");
    app.on_key(key(KeyCode::F(6)));
    assert_eq!(
        status_bar(&app, 80, 24),
        " qwen-0.5b │ react │ prompt_json │ constrained │ step off │ ready       F1 help"
    );
    let buffer = draw(&app, 80, 24);
    let x = (0..80).find(|x| buffer[(*x, 23)].symbol() == "c" && buffer[(*x + 1, 23)].symbol() == "o").expect("constrained");
    assert!(buffer[(x, 23)].modifier.contains(Modifier::BOLD), "constrained is not bold");
}

#[test]
fn the_status_bar_fits_80_columns_with_every_long_setting() {
    // plan_execute, prompt_json, constrained and step mode on: the longest names.
    let mut app = app_with(plan_run(PlanRun::Final));
    assert_eq!(
        status_bar(&app, 80, 24),
        " qwen-0.5b │ plan_execute │ builtin │ constrained │ step on │ ready     F1 help"
    );
    app.on_key(key(KeyCode::F(2)));
    // The mode's short name makes room for the help hint.
    assert_eq!(
        status_bar(&app, 80, 24),
        " qwen-0.5b │ plan │ prompt_json │ constrained │ step on │ ready         F1 help"
    );
    // Narrower still: every setting stays, in its short form, before any hint.
    assert_eq!(status_bar(&app, 60, 24), " qwen-0.5b │ plan │ json │ constr │ step on │ ready");
    // Wide: full names and more hints.
    assert_eq!(
        status_bar(&app, 120, 40),
        " qwen-0.5b │ plan_execute │ prompt_json │ constrained │ step on │ ready    F1 help  F2 tools  F3 mode  F5 step  ^C quit"
    );
}

/// The app loading qwen-1.5b, 3 s in, with a report of its weights 45% read.
fn loading_weights() -> App {
    let mut app = app_with(vec![Event::Settings(b4_agent::protocol::Settings { profile: "qwen-1.5b".into(), ..settings() })]);
    let start = std::time::Instant::now();
    app.set_now(start);
    app.apply(Event::ProfileLoading { name: "qwen-1.5b".into() });
    app.set_now(start + std::time::Duration::from_millis(3400));
    let progress = LoadProgress { stage: LoadStage::Weights, done: 450_200_000, total: 1_000_000_000 };
    app.apply(Event::ProfileProgress { name: "qwen-1.5b".into(), progress });
    app
}

#[test]
fn the_status_bar_tells_how_far_a_model_load_has_come_at_every_width() {
    let app = loading_weights();
    // Wide: the whole story. Narrower: the detail gives way first, then the settings from
    // the right; the profile and the load always show, down to 30 columns.
    let lines: Vec<(u16, String)> = [120, 100, 80, 60, 40, 30].iter().map(|&w| (w, status_bar(&app, w, 24))).collect();
    let expected = [
        (120, " qwen-1.5b │ react │ json │ free │ step off │ ⠋ loading qwen-1.5b · reading weights 45% (450/1000 MB) 3s        F1 help"),
        (100, " qwen-1.5b │ react │ json │ free │ step off │ ⠋ reading weights 45% (450/1000 MB) 3s        F1 help"),
        (80, " qwen-1.5b │ react │ json │ free │ step off │ ⠋ reading weights 45% 3s"),
        (60, " qwen-1.5b │ react │ json │ free │ step off │ ⠋ 45% 3s"),
        (40, " qwen-1.5b │ react │ json │ ⠋ 45% 3s"),
        (30, " qwen-1.5b │ react │ ⠋ 45% 3s"),
    ];
    assert_eq!(lines, expected.map(|(w, line)| (w, line.to_string())));
    for (width, line) in &lines {
        assert!(unicode_width::UnicodeWidthStr::width(line.as_str()) <= *width as usize, "{width}: {line}");
    }
}

#[test]
fn the_picker_shows_the_stage_of_the_load() {
    let mut app = loading_weights();
    app.on_key(key(KeyCode::F(4)));
    assert_snapshot!("picker_load_progress_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn constrained_decisions_show_their_mask_cost_in_the_raw_pane() {
    let app = app_with(plan_run(PlanRun::Final));
    let text = screen(&app, 120, 40);
    assert!(text.contains("turn 2 · step · builtin · constrained"), "{text}");
    assert!(text.contains("mask 0.90 ms/token · 3.0% of decode · grammar 42 ms"), "{text}");
    assert_eq!(text.matches("mask ").count(), 1, "only the constrained decision shows a mask line:\n{text}");
}

#[test]
fn tool_rows_on_a_shared_timeline() {
    // Two calls started together; one took 0.4 ms, the other 1.2 ms.
    let app = app_with(react(React::ToolsDone));
    assert_snapshot!("timeline_120x40", screen(&app, LARGE.0, LARGE.1));
}

#[test]
fn tools_running_in_parallel_say_so() {
    let app = app_with(react(React::ToolsRunning));
    let text = screen(&app, LARGE.0, LARGE.1);
    assert!(text.contains("running 2 in parallel"), "{text}");
}

#[test]
fn queued_input_while_busy() {
    let mut app = app_with(react(React::Streaming));
    for c in "然后计算 2 + 2".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_snapshot!("queued_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn picker_marks_missing_model_files_and_offers_the_fetch() {
    use b4_agent::tui::profiles::{ModelFile, ProfileEntry};
    let mut app = app();
    app.set_model_files(vec![
        ProfileEntry { name: "qwen-0.5b".into(), file: ModelFile::Present },
        ProfileEntry { name: "qwen-1.5b".into(), file: ModelFile::Missing { fix: "b4 models fetch qwen2.5-coder-1.5b".into() } },
        ProfileEntry { name: "mock".into(), file: ModelFile::NotNeeded },
    ]);
    app.on_key(KeyEvent::new(KeyCode::F(4), KeyModifiers::NONE));
    app.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
    assert_snapshot!("picker_files_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn final_answer_as_markdown() {
    let answer = "## 结果\n\n1. **docs/agent_intro.txt**：Agent 由模型、工具、记忆组成。\n2. `3.14 * 5` = 15.7\n\n- 搜索：*失败*\n\n```\nfile_reader docs/agent_intro.txt\n```";
    let app = app_with(vec![
        Event::Started { question: "总结一下".into(), mode: b4_agent::protocol::AgentMode::React, profile: "qwen-0.5b".into() },
        Event::FinalAnswer { content: answer.into() },
        Event::Finished { reason: b4_agent::protocol::StopReason::FinalAnswer },
    ]);
    assert_snapshot!("markdown_answer_80x24", screen(&app, SMALL.0, SMALL.1));
}

#[test]
fn the_wait_for_a_long_prompt_says_how_far_reading_it_has_come() {
    let mut events = react(React::Started);
    events.push(Event::TurnStarted { turn: 1, phase: Phase::React, tool_calling: ToolCalling::PromptJson });
    events.push(Event::Prefill { done: 3, total: 951, reused: 3 });
    events.push(Event::Prefill { done: 259, total: 951, reused: 3 });
    let app = app_with(events);
    let text = screen(&app, LARGE.0, LARGE.1);
    assert!(text.contains("reading prompt 259/951 tok (27%) · reused 3"), "{text}");
    assert!(!text.contains("streaming · 0 tok"), "{text}");
    // Once tokens stream, the pane counts them instead.
    let mut events = react(React::Streaming);
    events.insert(events.len() - 1, Event::Prefill { done: 951, total: 951, reused: 0 });
    let text = screen(&app_with(events), LARGE.0, LARGE.1);
    assert!(text.contains("streaming ·"), "{text}");
    assert!(!text.contains("reading prompt"), "{text}");
}
