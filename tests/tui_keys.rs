//! Key, mouse and paste handling as events in, state and engine commands out.

mod tui_script;

use b4_agent::brain::Decoding;
use std::time::{Duration, Instant};

use b4_agent::protocol::{AgentMode, Command, Event, LoadProgress, LoadStage, Settings, StopReason, ToolCalling};
use b4_agent::tui::cells::HistoryCell;
use b4_agent::tui::{Focus, Overlay, Pane, Scroll};
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use tui_script::*;

fn tokenizer() -> LoadProgress {
    LoadProgress { stage: LoadStage::Tokenizer, done: 0, total: 0 }
}

fn weights(done: u64, total: u64) -> LoadProgress {
    LoadProgress { stage: LoadStage::Weights, done, total }
}

fn alt(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::ALT)
}

fn shift(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::SHIFT)
}

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> MouseEvent {
    MouseEvent { kind, column, row, modifiers: KeyModifiers::NONE }
}

#[test]
fn f2_and_ctrl_t_toggle_tool_passing_for_the_next_decision() {
    let mut app = app();
    assert_eq!(app.on_key(key(KeyCode::F(2))), vec![Command::SetToolCalling(ToolCalling::Builtin)]);
    assert_eq!(app.settings().tool_calling, ToolCalling::Builtin);
    assert_eq!(app.on_key(ctrl('t')), vec![Command::SetToolCalling(ToolCalling::PromptJson)]);
    assert_eq!(app.settings().tool_calling, ToolCalling::PromptJson);
}

#[test]
fn f6_and_ctrl_g_toggle_decoding_for_the_next_decision() {
    let mut app = app();
    assert_eq!(app.on_key(key(KeyCode::F(6))), vec![Command::SetDecoding(Decoding::Constrained)]);
    assert_eq!(app.settings(), &Settings { decoding: Decoding::Constrained, ..settings() });
    assert_eq!(app.on_key(ctrl('g')), vec![Command::SetDecoding(Decoding::Free)]);
    assert_eq!(app.settings(), &settings());
    // A plain g is typed, not a toggle.
    assert_eq!(app.on_key(key(KeyCode::Char('g'))), Vec::<Command>::new());
    assert_eq!((app.settings().decoding, app.input().text()), (Decoding::Free, "g"));
}

#[test]
fn the_decoding_toggle_works_from_a_pane_while_paused_and_is_noted_when_confirmed() {
    let mut app = app_with(plan_run(PlanRun::Paused));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Messages);
    assert_eq!(app.on_key(key(KeyCode::F(6))), vec![Command::SetDecoding(Decoding::Constrained)]);
    // Still paused: toggling does not continue the run.
    assert!(app.run_state().paused.is_some());
    let confirmed = Settings { decoding: Decoding::Constrained, ..app.settings().clone() };
    app.apply(Event::Settings(confirmed.clone()));
    assert_eq!(app.settings(), &confirmed);
    assert_eq!(
        app.cells().last(),
        Some(&HistoryCell::Notice { text: "decoding → constrained (from the next decision)".into() })
    );
}

#[test]
fn f7_turns_the_prompt_cache_on_disk_on_and_off_and_the_change_is_noted_when_confirmed() {
    let mut app = app();
    assert_eq!(app.on_key(key(KeyCode::F(7))), vec![Command::SetPromptCache(true)]);
    assert!(app.settings().prompt_cache);
    app.apply(Event::Settings(Settings { prompt_cache: true, ..settings() }));
    assert_eq!(
        app.cells().last(),
        Some(&HistoryCell::Notice { text: "prompt cache on disk → on (prompt prefixes saved and read again by later runs)".into() })
    );
    assert_eq!(app.on_key(key(KeyCode::F(7))), vec![Command::SetPromptCache(false)]);
    app.apply(Event::Settings(settings()));
    assert_eq!(app.cells().last(), Some(&HistoryCell::Notice { text: "prompt cache on disk → off (nothing saved or read there)".into() }));
}

#[test]
fn f3_and_ctrl_p_toggle_the_mode() {
    let mut app = app();
    assert_eq!(app.on_key(key(KeyCode::F(3))), vec![Command::SetMode(AgentMode::PlanExecute)]);
    assert_eq!(app.settings().mode, AgentMode::PlanExecute);
    assert_eq!(app.on_key(ctrl('p')), vec![Command::SetMode(AgentMode::React)]);
}

#[test]
fn f5_and_ctrl_s_toggle_step_mode() {
    let mut app = app();
    assert_eq!(app.on_key(key(KeyCode::F(5))), vec![Command::SetStepMode(true)]);
    assert!(app.settings().step_mode);
    assert_eq!(app.on_key(ctrl('s')), vec![Command::SetStepMode(false)]);
}

#[test]
fn toggles_work_from_any_pane_and_while_running() {
    let mut app = app_with(react(React::Streaming));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Messages);
    assert_eq!(app.on_key(key(KeyCode::F(2))), vec![Command::SetToolCalling(ToolCalling::Builtin)]);
}

#[test]
fn the_engine_has_the_last_word_on_settings_and_changes_are_noted() {
    let mut app = app();
    app.on_key(key(KeyCode::F(2)));
    // The engine refuses (say, mid-decision) and reports what stays in force.
    app.apply(Event::Settings(settings()));
    assert_eq!(app.settings(), &settings());
    let builtin = Settings { tool_calling: ToolCalling::Builtin, ..settings() };
    app.apply(Event::Settings(builtin.clone()));
    assert_eq!(app.settings(), &builtin);
    assert_eq!(
        app.cells().last(),
        Some(&HistoryCell::Notice { text: "tool passing → builtin (from the next decision)".into() })
    );
}

#[test]
fn space_n_or_enter_continue_when_paused_with_an_empty_input() {
    for continue_key in [key(KeyCode::Char(' ')), key(KeyCode::Char('n')), key(KeyCode::Enter)] {
        let mut app = app_with(plan_run(PlanRun::Paused));
        assert_eq!(app.run_state().paused.as_deref(), Some("1 tool call: local_file_search(query=\"Agent\")"));
        assert_eq!(app.on_key(continue_key), vec![Command::Continue], "{continue_key:?}");
        assert_eq!(app.run_state().paused, None);
        // Nothing more to continue.
        assert_eq!(app.on_key(continue_key), Vec::<Command>::new());
    }
}

#[test]
fn space_types_a_space_when_the_input_has_text_even_when_paused() {
    let mut app = app_with(plan_run(PlanRun::Paused));
    type_text(&mut app, "why");
    assert_eq!(app.on_key(key(KeyCode::Char(' '))), Vec::<Command>::new());
    assert_eq!(app.on_key(key(KeyCode::Char('n'))), Vec::<Command>::new());
    assert_eq!(app.input().text(), "why n");
    assert!(app.run_state().paused.is_some());
}

#[test]
fn a_new_pause_needs_a_new_continue() {
    let mut app = app_with(plan_run(PlanRun::Paused));
    app.on_key(key(KeyCode::Char(' ')));
    app.apply(Event::Paused { what: "decision 2 (step)".into(), calls: vec![] });
    assert_eq!(app.on_key(key(KeyCode::Char('n'))), vec![Command::Continue]);
}

#[test]
fn leaving_step_mode_while_paused_also_continues() {
    let mut app = app_with(plan_run(PlanRun::Paused));
    assert_eq!(app.on_key(key(KeyCode::F(5))), vec![Command::SetStepMode(false), Command::Continue]);
    assert_eq!(app.run_state().paused, None);
}

#[test]
fn esc_cancels_a_running_generation_once() {
    let mut app = app_with(react(React::Streaming));
    assert_eq!(app.on_key(key(KeyCode::Esc)), vec![Command::Cancel]);
    assert!(app.run_state().cancelling);
    assert_eq!(app.on_key(key(KeyCode::Esc)), Vec::<Command>::new());
    app.apply(Event::Finished { reason: StopReason::Cancelled });
    assert!(!app.run_state().active);
    assert_eq!(app.cells().last(), Some(&HistoryCell::Warning { text: "stopped: cancelled".into() }));
}

#[test]
fn esc_when_idle_goes_back_to_the_input() {
    let mut app = app();
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.on_key(key(KeyCode::Esc)), Vec::<Command>::new());
    assert_eq!(app.focus(), Focus::Input);
}

#[test]
fn cancelled_runs_mark_unfinished_tools_stopped() {
    let mut app = app_with(react(React::ToolsRunning));
    app.on_key(key(KeyCode::Esc));
    app.apply(Event::Finished { reason: StopReason::Cancelled });
    let text = screen(&app, 80, 24);
    assert!(text.contains("■ stopped"), "{text}");
    assert!(text.contains("2 stopped"), "{text}");
}

#[test]
fn enter_sends_the_question_and_up_recalls_it() {
    let mut app = app();
    type_text(&mut app, "计算 3.14 * 5");
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Command::Ask { question: "计算 3.14 * 5".into() }]);
    assert_eq!(app.input().text(), "");
    assert!(app.run_state().active);
    app.apply(Event::Finished { reason: StopReason::FinalAnswer });
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.input().text(), "计算 3.14 * 5");
    app.on_key(key(KeyCode::Down));
    assert_eq!(app.input().text(), "");
}

#[test]
fn enter_on_an_empty_input_sends_nothing() {
    let mut app = app();
    type_text(&mut app, "   ");
    assert_eq!(app.on_key(key(KeyCode::Enter)), Vec::<Command>::new());
}

#[test]
fn enter_while_a_run_goes_on_queues_the_question_and_sends_it_when_the_run_ends() {
    let mut app = app_with(react(React::Streaming));
    type_text(&mut app, "next question");
    assert_eq!(app.on_key(key(KeyCode::Enter)), Vec::<Command>::new());
    assert_eq!((app.input().text(), app.queued()), ("", Some("next question")));
    let text = screen(&app, 100, 30);
    assert!(text.contains("⏳ queued: next question"), "{text}");
    assert!(text.contains("queued: sent when this run ends"), "{text}");
    // Nothing goes out until the run ends; then the queued question does, once.
    app.apply(Event::Finished { reason: StopReason::FinalAnswer });
    assert_eq!(app.take_commands(), vec![Command::Ask { question: "next question".into() }]);
    assert_eq!(app.take_commands(), Vec::<Command>::new());
    assert_eq!(app.queued(), None);
    assert!(app.run_state().active, "the queued question's run has begun");
}

#[test]
fn esc_cancels_the_run_and_puts_the_queued_question_back_in_the_input() {
    let mut app = app_with(react(React::Streaming));
    type_text(&mut app, "later");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.on_key(key(KeyCode::Esc)), vec![Command::Cancel]);
    assert_eq!((app.input().text(), app.queued()), ("later", None));
    app.apply(Event::Finished { reason: StopReason::Cancelled });
    assert_eq!(app.take_commands(), Vec::<Command>::new());
}

#[test]
fn alt_enter_shift_enter_and_ctrl_j_insert_newlines() {
    let mut app = app();
    type_text(&mut app, "a");
    app.on_key(alt(KeyCode::Enter));
    type_text(&mut app, "b");
    app.on_key(shift(KeyCode::Enter));
    type_text(&mut app, "c");
    app.on_key(ctrl('j'));
    type_text(&mut app, "d");
    assert_eq!(app.input().text(), "a\nb\nc\nd");
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Command::Ask { question: "a\nb\nc\nd".into() }]);
}

#[test]
fn input_editing_keys_handle_cjk() {
    let mut app = app();
    type_text(&mut app, "中文输入");
    app.on_key(key(KeyCode::Home));
    app.on_key(key(KeyCode::Right));
    app.on_key(key(KeyCode::Delete));
    assert_eq!(app.input().text(), "中输入");
    app.on_key(key(KeyCode::End));
    app.on_key(key(KeyCode::Backspace));
    assert_eq!(app.input().text(), "中输");
    app.on_key(ctrl('u'));
    assert_eq!(app.input().text(), "");
}

#[test]
fn bracketed_paste_inserts_text_with_newlines_at_the_cursor() {
    let mut app = app();
    app.on_key(key(KeyCode::Tab));
    app.on_event(crossterm::event::Event::Paste("第一行\r\n第二行".into()));
    assert_eq!(app.focus(), Focus::Input);
    assert_eq!(app.input().text(), "第一行\n第二行");
    assert_eq!(app.input().cursor(), app.input().text().len());
}

#[test]
fn key_releases_are_ignored() {
    let mut app = app();
    let release = KeyEvent::new_with_kind_and_state(
        KeyCode::F(2),
        KeyModifiers::NONE,
        KeyEventKind::Release,
        KeyEventState::NONE,
    );
    assert_eq!(app.on_key(release), Vec::<Command>::new());
    assert_eq!(app.settings().tool_calling, ToolCalling::PromptJson);
}

#[test]
fn tab_cycles_focus_and_includes_the_plan_only_when_there_is_one() {
    let mut app = app();
    let mut seen = Vec::new();
    for _ in 0..5 {
        app.on_key(key(KeyCode::Tab));
        seen.push(app.focus());
    }
    assert_eq!(seen, vec![Focus::Messages, Focus::Raw, Focus::Tools, Focus::Input, Focus::Messages]);
    let mut plan = app_with(plan_run(PlanRun::Planned));
    let mut seen = Vec::new();
    for _ in 0..5 {
        plan.on_key(key(KeyCode::Tab));
        seen.push(plan.focus());
    }
    assert_eq!(seen, vec![Focus::Messages, Focus::Raw, Focus::Tools, Focus::Plan, Focus::Input]);
    plan.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(plan.focus(), Focus::Plan);
}

#[test]
fn arrows_scroll_the_focused_pane_and_end_follows_again() {
    let mut app = app_with(plan_run(PlanRun::Final));
    draw(&app, 80, 24);
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.scroll(Pane::Messages), Scroll::Follow);
    app.on_key(key(KeyCode::Up));
    let Scroll::At(top) = app.scroll(Pane::Messages) else { panic!("should hold a position") };
    draw(&app, 80, 24);
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.scroll(Pane::Messages), Scroll::At(top - 1));
    draw(&app, 80, 24);
    app.on_key(key(KeyCode::Down));
    assert_eq!(app.scroll(Pane::Messages), Scroll::At(top));
    draw(&app, 80, 24);
    // Down at the bottom follows new output again.
    app.on_key(key(KeyCode::Down));
    assert_eq!(app.scroll(Pane::Messages), Scroll::Follow);
    app.on_key(key(KeyCode::Home));
    assert_eq!(app.scroll(Pane::Messages), Scroll::At(0));
    app.on_key(key(KeyCode::End));
    assert_eq!(app.scroll(Pane::Messages), Scroll::Follow);
}

#[test]
fn page_keys_from_the_input_scroll_the_messages() {
    let mut app = app_with(plan_run(PlanRun::Final));
    draw(&app, 80, 24);
    app.on_key(key(KeyCode::PageUp));
    let Scroll::At(top) = app.scroll(Pane::Messages) else { panic!("PgUp should scroll up") };
    draw(&app, 80, 24);
    app.on_key(key(KeyCode::PageUp));
    // A page is the pane's height less one line (10 rows inside the borders at 80x24).
    assert_eq!(app.scroll(Pane::Messages), Scroll::At(top - 9));
    draw(&app, 80, 24);
    app.on_key(key(KeyCode::PageDown));
    app.on_key(key(KeyCode::PageDown));
    assert_eq!(app.focus(), Focus::Input);
}

#[test]
fn mouse_wheel_scrolls_the_pane_under_the_pointer_and_click_focuses() {
    let mut app = app_with(react(React::Final));
    draw(&app, 80, 24);
    // The raw output pane is rows 12..19 at 80x24.
    app.on_mouse(mouse(MouseEventKind::ScrollUp, 10, 15));
    assert!(matches!(app.scroll(Pane::Raw), Scroll::At(_)));
    assert_eq!(app.scroll(Pane::Messages), Scroll::Follow);
    app.on_mouse(mouse(MouseEventKind::Down(MouseButton::Left), 10, 5));
    assert_eq!(app.focus(), Focus::Messages);
    app.on_mouse(mouse(MouseEventKind::Down(MouseButton::Left), 10, 21));
    assert_eq!(app.focus(), Focus::Input);
}

#[test]
fn e_in_the_messages_pane_expands_tool_results_and_letters_elsewhere_type() {
    let mut app = app_with(plan_run(PlanRun::Final));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Messages);
    app.on_key(key(KeyCode::Char('e')));
    assert!(app.results_expanded());
    app.on_key(key(KeyCode::Char('e')));
    assert!(!app.results_expanded());
    // Any other letter goes to the input.
    app.on_key(key(KeyCode::Char('x')));
    assert_eq!(app.focus(), Focus::Input);
    assert_eq!(app.input().text(), "x");
    // In the input, e is just a letter.
    app.on_key(key(KeyCode::Char('e')));
    assert_eq!(app.input().text(), "xe");
    assert!(!app.results_expanded());
}

#[test]
fn question_mark_opens_help_only_with_an_empty_input() {
    let mut app = app();
    app.on_key(key(KeyCode::Char('?')));
    assert_eq!(app.overlay(), Some(&Overlay::Help));
    // Keys other than the closing ones do nothing under the overlay.
    assert_eq!(app.on_key(key(KeyCode::F(2))), Vec::<Command>::new());
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay(), None);
    type_text(&mut app, "what");
    app.on_key(key(KeyCode::Char('?')));
    assert_eq!(app.input().text(), "what?");
    assert_eq!(app.overlay(), None);
    app.on_key(key(KeyCode::F(1)));
    assert_eq!(app.overlay(), Some(&Overlay::Help));
    app.on_key(key(KeyCode::F(1)));
    assert_eq!(app.overlay(), None);
}

#[test]
fn profile_picker_sends_the_choice_and_closes_when_the_engine_switches() {
    let mut app = app();
    app.on_key(ctrl('o'));
    assert_eq!(app.overlay(), Some(&Overlay::Picker { selected: 0, requested: None }));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    assert_eq!(app.overlay(), Some(&Overlay::Picker { selected: 2, requested: None }));
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Command::SetProfile("qwen-1.5b".into())]);
    // The status bar keeps the current profile until the engine confirms.
    assert_eq!(app.settings().profile, "qwen-0.5b");
    assert!(app.overlay().is_some());
    // The engine's order: the switch, then the load in the background.
    app.apply(Event::Settings(Settings { profile: "qwen-1.5b".into(), ..settings() }));
    assert_eq!(app.overlay(), None);
    assert_eq!(app.settings().profile, "qwen-1.5b");
    app.apply(Event::ProfileLoading { name: "qwen-1.5b".into() });
    let loading = screen(&app, 80, 24);
    assert!(loading.contains("loading qwen-1.5b 0s"), "{loading}");
    app.apply(Event::ProfileReady { name: "qwen-1.5b".into(), load_ms: 2300.0 });
    let notes: Vec<&HistoryCell> = app.cells().iter().collect();
    assert_eq!(
        notes,
        vec![
            &HistoryCell::Notice { text: "model profile → qwen-1.5b".into() },
            &HistoryCell::Notice { text: "loading model qwen-1.5b…".into() },
            &HistoryCell::Notice { text: "model qwen-1.5b ready (loaded in 2.3 s)".into() },
        ]
    );
    assert!(!screen(&app, 80, 24).contains("loading qwen-1.5b"));
}

#[test]
fn load_progress_shows_in_the_status_bar_until_the_model_is_ready() {
    let mut app = app();
    let start = Instant::now();
    app.set_now(start);
    app.apply(Event::ProfileLoading { name: "qwen-0.5b".into() });
    assert!(status_line(&app).contains("⠋ loading qwen-0.5b 0s"), "{}", status_line(&app));
    app.set_now(start + Duration::from_millis(1200));
    app.apply(Event::ProfileProgress { name: "qwen-0.5b".into(), progress: tokenizer() });
    assert!(status_line(&app).contains("⠋ loading qwen-0.5b · tokenizer 1s"), "{}", status_line(&app));
    app.set_now(start + Duration::from_millis(3400));
    app.apply(Event::ProfileProgress { name: "qwen-0.5b".into(), progress: weights(180_400_000, 398_000_000) });
    let status = status_line(&app);
    assert!(status.contains("⠋ loading qwen-0.5b · reading weights 45% (180/398 MB) 3s"), "{status}");
    // A late report of a load the engine gave up on (another profile) changes nothing.
    app.apply(Event::ProfileProgress { name: "qwen-1.5b".into(), progress: weights(1, 1000) });
    assert_eq!(status_line(&app), status);
    app.apply(Event::ProfileReady { name: "qwen-0.5b".into(), load_ms: 4100.0 });
    let status = status_line(&app);
    assert!(status.contains("ready") && !status.contains("loading") && !status.contains('%'), "{status}");
    // The next load starts from no report: nothing of the last one stays.
    app.apply(Event::ProfileLoading { name: "qwen-0.5b".into() });
    let status = status_line(&app);
    assert!(status.contains("loading qwen-0.5b") && !status.contains("reading weights"), "{status}");
}

#[test]
fn picking_the_current_profile_just_closes_the_picker() {
    let mut app = app();
    app.on_key(key(KeyCode::F(4)));
    assert_eq!(app.on_key(key(KeyCode::Enter)), Vec::<Command>::new());
    assert_eq!(app.overlay(), None);
    app.on_key(key(KeyCode::F(4)));
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay(), None);
}

#[test]
fn switching_back_to_a_loaded_profile_says_there_is_no_wait() {
    let mut app = app();
    app.apply(Event::ProfileReady { name: "qwen-0.5b".into(), load_ms: 900.0 });
    app.apply(Event::Settings(Settings { profile: "qwen-1.5b".into(), ..settings() }));
    app.apply(Event::ProfileReady { name: "qwen-1.5b".into(), load_ms: 2300.0 });
    app.apply(Event::Settings(settings()));
    assert_eq!(
        app.cells().last(),
        Some(&HistoryCell::Notice { text: "model profile → qwen-0.5b (already loaded: no wait)".into() })
    );
}

#[test]
fn ctrl_c_quits() {
    let mut app = app_with(react(React::Streaming));
    assert_eq!(app.on_key(ctrl('c')), vec![Command::Quit]);
    assert!(app.should_quit());
}

#[test]
fn ctrl_n_starts_a_new_conversation_only_when_idle() {
    let mut app = app_with(react(React::Streaming));
    assert_eq!(app.on_key(ctrl('n')), Vec::<Command>::new());
    app.apply(Event::Finished { reason: StopReason::FinalAnswer });
    assert_eq!(app.on_key(ctrl('n')), vec![Command::Reset]);
    assert_eq!(app.cells(), &[HistoryCell::Notice { text: "new conversation".into() }]);
}

#[test]
fn errors_are_shown_and_the_app_keeps_taking_questions() {
    let mut app = app();
    app.apply(Event::Error { message: "bad config: configs/model.yaml: unknown backend \"gpu\"".into() });
    assert_eq!(
        app.cells(),
        &[HistoryCell::Error { text: "bad config: configs/model.yaml: unknown backend \"gpu\"".into() }]
    );
    type_text(&mut app, "hello");
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Command::Ask { question: "hello".into() }]);
}

#[test]
fn the_question_is_shown_once_though_started_and_message_appended_both_carry_it() {
    let app = app_with(react(React::Started));
    let users = app.cells().iter().filter(|c| matches!(c, HistoryCell::User { .. })).count();
    assert_eq!(users, 1);
}

#[test]
fn the_final_answer_marks_the_last_assistant_message() {
    let app = app_with(react(React::Final));
    let answers: Vec<&HistoryCell> =
        app.cells().iter().filter(|c| matches!(c, HistoryCell::Assistant { .. })).collect();
    assert_eq!(
        answers,
        vec![&HistoryCell::Assistant {
            text: "1) 文件 docs/missing.txt 不存在，无法阅读。\n2) 3.14 * 5 = 15.7".into(),
            final_answer: true
        }]
    );
}

#[test]
fn ctrl_e_exports_json_and_markdown_without_overwriting() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut app = app_with(plan_run(PlanRun::Final));
    app.set_export_dir(dir.path());
    app.on_key(ctrl('e'));
    app.on_key(ctrl('e'));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read export dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    let json_names: Vec<&String> = names.iter().filter(|n| n.ends_with(".json")).collect();
    assert_eq!(json_names.len(), 2);
    assert_ne!(json_names[0], json_names[1]);
    for name in &names {
        assert!(name.starts_with("session-"), "{name}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(json_names[0])).expect("json file"))
            .expect("valid JSON");
    assert_eq!(json["settings"]["tool_calling"], "builtin");
    let question = &json["conversations"][0]["questions"][0];
    assert_eq!(question["question"], PLAN_QUESTION);
    assert_eq!(question["profile"], "qwen-0.5b");
    assert_eq!(question["stop_reason"], "final_answer");
    // The question, the plan's calls, three results, the answer.
    assert_eq!(question["messages"].as_array().map(Vec::len), Some(6));
    assert_eq!(question["plans"][0]["states"], serde_json::json!(["done", "failed", "done"]));
    assert_eq!(question["decisions"].as_array().map(Vec::len), Some(2));
    let md_name = json_names[0].replace(".json", ".md");
    let md = std::fs::read_to_string(dir.path().join(md_name)).expect("markdown file");
    assert!(md.contains(PLAN_QUESTION), "{md}");
    assert!(md.contains("2. [failed] 搜索包含 Agent 的文件 (`local_file_search`)"), "{md}");
    assert_eq!(json["settings"]["decoding"], "constrained");
    let decisions = &question["decisions"];
    assert_eq!((&decisions[0]["decoding"], &decisions[1]["decoding"]), (&"free".into(), &"constrained".into()));
    assert_eq!(decisions[1]["stats"]["mask_ms"], 54.9);
    assert_eq!((&decisions[0]["stop_reason"], &decisions[1]["stop_reason"]), (&serde_json::Value::Null, &"final_answer".into()));
    assert!(md.contains("- decoding: `constrained`\n"), "{md}");
    assert!(md.contains("## Conversation 1\n\n### Question 1 · `qwen-0.5b` · `plan_execute` · final answer\n"), "{md}");
    assert!(md.contains("| 1 | qwen-0.5b | plan | prompt_json | free | 904 | 0 | 164 | 33.5 | 6000 | – | plan |"), "{md}");
    assert!(
        md.contains("| 2 | qwen-0.5b | step | builtin | constrained | 1320 | 1068 | 61 | 33.9 | 2110 | mask 0.90 ms/token · 3.0% of decode · grammar 42 ms | answer |"),
        "{md}"
    );
    match app.cells().last() {
        Some(HistoryCell::Notice { text }) => assert!(text.starts_with("session exported to"), "{text}"),
        other => panic!("expected an export notice, got {other:?}"),
    }
}

#[test]
fn export_to_an_unwritable_place_is_an_error_message_not_a_crash() {
    let dir = tempfile::tempdir().expect("temp dir");
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a directory").expect("write");
    let mut app = app();
    app.set_export_dir(blocker.join("outputs"));
    app.on_key(ctrl('e'));
    match app.cells().last() {
        Some(HistoryCell::Error { text }) => assert!(text.starts_with("export failed: cannot create"), "{text}"),
        other => panic!("expected an error cell, got {other:?}"),
    }
}

#[test]
fn a_failed_profile_switch_goes_back_and_the_next_question_works() {
    let mut app = app();
    app.on_key(key(KeyCode::F(4)));
    app.on_key(key(KeyCode::Down));
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Command::SetProfile("qwen-1.5b".into())]);
    // The engine's order: the switch, the load, its failure, the settings it really has.
    app.apply(Event::Settings(Settings { profile: "qwen-1.5b".into(), ..settings() }));
    app.apply(Event::ProfileLoading { name: "qwen-1.5b".into() });
    assert!(status_line(&app).contains("loading qwen-1.5b"));
    app.apply(Event::Error { message: "profile qwen-1.5b: model file not found; staying on qwen-0.5b".into() });
    app.apply(Event::Settings(settings()));
    assert_eq!(app.settings().profile, "qwen-0.5b");
    let status = status_line(&app);
    assert!(status.starts_with(" qwen-0.5b │") && status.contains("ready") && !status.contains("loading"), "{status}");
    assert!(status.contains("could not load qwen-1.5b: still on qwen-0.5b"), "{status}");
    type_text(&mut app, "hello");
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Command::Ask { question: "hello".into() }]);
}

#[test]
fn a_question_whose_model_fails_still_shows_and_is_exported() {
    let mut app = app();
    app.apply(Event::ProfileLoading { name: "qwen-0.5b".into() });
    // The engine's order when the brain cannot be had: the question, why, the stop.
    app.apply(Event::Started { question: "你好".into(), mode: AgentMode::React, profile: "qwen-0.5b".into() });
    app.apply(Event::Error { message: "profile qwen-0.5b: model file not found".into() });
    app.apply(Event::Finished { reason: StopReason::BrainError });
    assert!(app.cells().contains(&HistoryCell::User { text: "你好".into() }));
    assert!(!status_line(&app).contains("loading"));
    let question = &app.session().conversations[0].questions[0];
    assert_eq!(question.question, "你好");
    assert_eq!(question.errors, vec!["profile qwen-0.5b: model file not found".to_string()]);
    assert_eq!(question.stop_reason, Some(StopReason::BrainError));
}

#[test]
fn a_tool_pause_names_the_calls_and_shows_them_as_next() {
    let app = app_with(plan_run(PlanRun::Paused));
    let text = screen(&app, 120, 40);
    assert!(text.contains("PAUSED before 1 tool call: local_file_search(query=\"Agent\")"), "{text}");
    assert!(text.contains("⏸ next    local_file_search"), "{text}");
    // Messages and the plan agree: the plan's calls run one per step.
    assert!(text.contains("→ plan: 3 tool calls, one per step"), "{text}");
}

#[test]
fn status_hints_follow_the_focus_and_the_run() {
    let mut app = app();
    assert!(status_line(&app).contains("F2 tools"));
    app.on_key(key(KeyCode::Tab));
    let messages = status_line(&app);
    assert!(messages.contains("↑↓ scroll") && messages.contains("e fold results"), "{messages}");
    let mut app = app_with(plan_run(PlanRun::Paused));
    let paused = status_line(&app);
    assert!(paused.contains("Space continue") && paused.contains("Esc cancel"), "{paused}");
    app.on_key(key(KeyCode::Char(' ')));
    let busy = status_line(&app);
    assert!(busy.contains("Esc cancel") && busy.contains("Enter queue"), "{busy}");
}

#[test]
fn export_keeps_conversations_apart_and_memory_notes_once() {
    let mut app = app_with(react(React::Final));
    for event in react(React::Final) {
        app.apply(event);
    }
    app.on_key(ctrl('n'));
    for event in react(React::Final) {
        app.apply(event);
    }
    let log = app.session();
    assert_eq!(log.conversations.iter().map(|c| c.questions.len()).collect::<Vec<_>>(), vec![2, 1]);
    assert_eq!(log.memory_notes, vec!["用户喜欢简洁的中文回答".to_string()]);
    let md = b4_agent::tui::export::to_markdown(app.settings(), log, "now");
    assert_eq!(md.matches("用户喜欢简洁的中文回答").count(), 1, "{md}");
    assert!(md.contains("## Conversation 2\n\n### Question 1 · `qwen-0.5b` · `react` · final answer"), "{md}");
    assert!(md.contains("| 1 | qwen-0.5b | react | prompt_json | free | 812 | 0 | 71 | 33.8 | 3050 | – | 2 tool calls |"), "{md}");
}

#[test]
fn a_mock_decision_shows_no_speed_and_no_grammar_it_did_not_have() {
    let mut app = app();
    app.apply(Event::Settings(Settings { profile: "mock".into(), decoding: Decoding::Constrained, ..settings() }));
    app.apply(Event::Started { question: "q".into(), mode: AgentMode::React, profile: "mock".into() });
    app.apply(Event::TurnStarted { turn: 1, phase: b4_agent::protocol::Phase::React, tool_calling: ToolCalling::PromptJson });
    app.apply(Event::Decided {
        turn: 1,
        ai: b4_agent::protocol::AiMessage::answer("hi"),
        raw: "hi".into(),
        // The mock decoded nothing: its report says so (no decoding).
        report: b4_agent::protocol::DecisionReport {
            stats: b4_agent::protocol::DecisionStats { prompt_tokens: 30, generated_tokens: 1, latency_ms: 1.0, ..Default::default() },
            ..b4_agent::protocol::DecisionReport::new("mock", b4_agent::protocol::Phase::React, ToolCalling::PromptJson, None)
        },
    });
    let text = screen(&app, 120, 40);
    assert!(text.contains("turn 1 · react · prompt_json · free"), "{text}");
    assert!(!text.contains("tok/s") && !text.contains("mask "), "{text}");
    assert_eq!(app.session().conversations[0].questions[0].decisions[0].decoding, Decoding::Free);
}

fn status_line(app: &b4_agent::tui::App) -> String {
    let text = screen(app, 120, 40);
    text.lines().rfind(|l| !l.starts_with("cursor:")).unwrap_or_default().to_string()
}
