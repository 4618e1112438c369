//! B3, the tool layer: builds the tools schema from the skills, validates each call against
//! it and runs the calls of one AIMessage concurrently, answering each with exactly one
//! ToolMessage, in call order, whatever fails.

pub mod spec;
pub mod validate;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::RwLock;

use spec::{SpecError, ToolSpec};

use crate::protocol::{ToolCall, ToolMessage};
use crate::skills::{Skill, Workspace};

/// The outcome of one call.
#[derive(Clone, Debug)]
pub struct CallOutcome {
    pub call: ToolCall,
    pub result: ToolMessage,
    pub duration_ms: f64,
}

pub struct ToolLayer {
    skills: Vec<Arc<dyn Skill>>,
    /// Each skill's manifest read once (a broken one answers its calls with why).
    specs: Vec<Result<ToolSpec, SpecError>>,
    by_name: HashMap<String, usize>,
    workspace: Arc<Workspace>,
    timeout: Duration,
    /// Parallel-safe calls share it; the others take it alone.
    exclusive: Arc<RwLock<()>>,
}

impl ToolLayer {
    pub fn new(skills: Vec<Arc<dyn Skill>>, workspace: Workspace, timeout: Duration) -> Self {
        let by_name = skills.iter().enumerate().map(|(i, s)| (s.manifest().name.clone(), i)).collect();
        let specs = skills.iter().enumerate().map(|(i, s)| ToolSpec::parse(&manifest_tool(s.manifest()), i)).collect();
        Self { skills, specs, by_name, workspace: Arc::new(workspace), timeout, exclusive: Arc::new(RwLock::new(())) }
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The tools schema in OpenAI function format.
    pub fn schema(&self) -> Vec<Value> {
        self.skills.iter().map(|s| manifest_tool(s.manifest())).collect()
    }

    fn skill(&self, name: &str) -> Option<&Arc<dyn Skill>> {
        self.by_name.get(name).and_then(|&i| self.skills.get(i))
    }

    /// Checks that the tool exists and the arguments follow its schema.
    pub fn validate(&self, call: &ToolCall) -> Result<(), String> {
        let Some(spec) = self.by_name.get(&call.name).and_then(|&i| self.specs.get(i)) else {
            let known: Vec<&str> = self.skills.iter().map(|s| s.manifest().name.as_str()).collect();
            return Err(format!("unknown tool '{}' (available: {})", call.name, known.join(", ")));
        };
        let spec = spec.as_ref().map_err(|e| format!("{} cannot be called, its schema is broken: {e}", call.name))?;
        validate::validate_args(spec, &call.args).map_err(|e| format!("invalid call to {}: {e}", call.name))
    }

    /// Runs one call: validation, then the skill on a blocking thread under the timeout.
    pub async fn run(&self, call: &ToolCall) -> CallOutcome {
        let started = Instant::now();
        let result = self.run_inner(call).await;
        CallOutcome { call: call.clone(), result, duration_ms: started.elapsed().as_secs_f64() * 1e3 }
    }

    async fn run_inner(&self, call: &ToolCall) -> ToolMessage {
        if let Err(e) = self.validate(call) {
            return ToolMessage::error(call, e);
        }
        let Some(skill) = self.skill(&call.name).cloned() else {
            return ToolMessage::error(call, format!("unknown tool '{}'", call.name));
        };
        // Held until the skill returns, so an exclusive skill never overlaps another call.
        let _guard = if skill.parallel_safe() {
            Guard::Shared(self.exclusive.clone().read_owned().await)
        } else {
            Guard::Exclusive(self.exclusive.clone().write_owned().await)
        };
        // The skill sees the deadline too, so a timed-out call stops its own work instead
        // of running on (and holding memory) after its ToolMessage says it timed out.
        let deadline = Instant::now() + self.timeout;
        let workspace = self.workspace.with_deadline(deadline);
        let args = call.args.clone();
        let task = tokio::task::spawn_blocking(move || skill.run(&args, &workspace));
        let timed_out = || ToolMessage::error(call, format!("{} timed out after {:.0?}", call.name, self.timeout));
        match tokio::time::timeout(self.timeout, task).await {
            Ok(Ok(Ok(output))) => ToolMessage::success(call, output),
            // The skill saw its deadline pass a moment before the wait for it ended.
            Ok(Ok(Err(_))) if Instant::now() >= deadline => timed_out(),
            Ok(Ok(Err(e))) => ToolMessage::error(call, e.to_string()),
            Ok(Err(join)) => ToolMessage::error(call, format!("{} crashed: {join}", call.name)),
            Err(_) => timed_out(),
        }
    }

    /// Runs all calls concurrently; one outcome per call, in call order. `on_start` and
    /// `on_finish` are told as each call starts and ends.
    pub async fn dispatch(
        &self,
        calls: &[ToolCall],
        on_start: impl Fn(&ToolCall),
        on_finish: impl Fn(&CallOutcome),
    ) -> Vec<CallOutcome> {
        let futures = calls.iter().map(|call| {
            on_start(call);
            let on_finish = &on_finish;
            async move {
                let outcome = self.run(call).await;
                on_finish(&outcome);
                outcome
            }
        });
        join_all(futures).await
    }
}

fn manifest_tool(m: &crate::skills::Manifest) -> Value {
    spec::openai_tool(&m.name, &Value::from(m.description.as_str()), &m.parameters)
}

enum Guard {
    Shared(#[allow(dead_code)] tokio::sync::OwnedRwLockReadGuard<()>),
    Exclusive(#[allow(dead_code)] tokio::sync::OwnedRwLockWriteGuard<()>),
}

/// Polls all futures concurrently on the current task and returns their outputs in order.
async fn join_all<F: std::future::Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for f in futures {
        set.push(Box::pin(f));
    }
    let mut outputs: Vec<Option<F::Output>> = set.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, fut) in outputs.iter_mut().zip(set.iter_mut()) {
            if slot.is_none() {
                match fut.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *slot = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Args, ToolStatus};
    use crate::skills::{Manifest, SkillError};
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// A test skill with real behaviour: sleeps, then answers or fails.
    struct Sleepy {
        manifest: Manifest,
        delay: Duration,
        fail: bool,
        running: Arc<AtomicUsize>,
        peak: Arc<AtomicUsize>,
    }

    impl Skill for Sleepy {
        fn manifest(&self) -> &Manifest {
            &self.manifest
        }
        fn run(&self, args: &Args, _: &Workspace) -> Result<Value, SkillError> {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(self.delay);
            self.running.fetch_sub(1, Ordering::SeqCst);
            if self.fail {
                return Err(SkillError::new("it failed on purpose"));
            }
            Ok(json!({"content": format!("done {}", args.get("x").cloned().unwrap_or(Value::Null))}))
        }
    }

    fn layer(timeout_ms: u64) -> (ToolLayer, Arc<AtomicUsize>) {
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mk = |name: &str, delay: u64, fail: bool| -> Arc<dyn Skill> {
            Arc::new(Sleepy {
                manifest: Manifest {
                    name: name.into(),
                    description: format!("{name} tool"),
                    parameters: json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": false}),
                },
                delay: Duration::from_millis(delay),
                fail,
                running: running.clone(),
                peak: peak.clone(),
            })
        };
        let dir = std::env::temp_dir();
        let ws = Workspace::new(&dir).unwrap();
        let skills = vec![mk("slow", 300, false), mk("fails", 10, false), mk("broken", 10, true), mk("stuck", 5_000, false)];
        (ToolLayer::new(skills, ws, Duration::from_millis(timeout_ms)), peak)
    }

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), args: args.as_object().cloned().unwrap_or_default() }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_calls_concurrently_and_answers_each_in_order() {
        let (layer, peak) = layer(2_000);
        let calls = vec![
            call("call_001", "slow", json!({"x": 1})),
            call("call_002", "broken", json!({"x": 2})),
            call("call_003", "slow", json!({"x": 3})),
            call("call_004", "nope", json!({})),
            call("call_005", "slow", json!({"x": "three"})),
        ];
        let started_log = Mutex::new(Vec::new());
        let out = layer.dispatch(&calls, |c| started_log.lock().unwrap().push(c.id.clone()), |_| {}).await;
        let ids: Vec<&str> = out.iter().map(|o| o.result.tool_call_id.as_str()).collect();
        assert_eq!(ids, vec!["call_001", "call_002", "call_003", "call_004", "call_005"]);
        let statuses: Vec<ToolStatus> = out.iter().map(|o| o.result.status).collect();
        use ToolStatus::*;
        assert_eq!(statuses, vec![Success, Error, Success, Error, Error]);
        assert_eq!(out[0].result.output_text().as_deref(), Some("done 1"));
        assert_eq!(out[1].result.error_text().as_deref(), Some("it failed on purpose"));
        assert_eq!(
            out[3].result.error_text().as_deref(),
            Some("unknown tool 'nope' (available: slow, fails, broken, stuck)")
        );
        assert_eq!(
            out[4].result.error_text().as_deref(),
            Some("invalid call to slow: argument 'x' must be integer, got \"three\"")
        );
        // The 300 ms calls overlapped instead of running one after the other.
        assert!(peak.load(Ordering::SeqCst) >= 2);
        assert_eq!(started_log.into_inner().unwrap().len(), 5);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stuck_tool_times_out_without_holding_up_the_others() {
        let (layer, _) = layer(400);
        let calls = vec![call("a", "stuck", json!({"x": 1})), call("b", "fails", json!({"x": 2}))];
        let finished = Mutex::new(Vec::new());
        let out = layer.dispatch(&calls, |_| {}, |o| finished.lock().unwrap().push(o.call.id.clone())).await;
        assert_eq!(out[0].result.error_text().as_deref(), Some("stuck timed out after 400ms"));
        assert_eq!(out[1].result.status, ToolStatus::Success);
        // The quick call answered while the stuck one was still running.
        assert_eq!(finished.into_inner().unwrap(), vec!["b", "a"]);
    }

    #[tokio::test]
    async fn a_call_to_a_skill_with_a_broken_schema_is_answered_with_why() {
        let skill = Sleepy {
            manifest: Manifest { name: "odd".into(), description: "odd tool".into(), parameters: json!({"type": "Pointer"}) },
            delay: Duration::ZERO,
            fail: false,
            running: Arc::default(),
            peak: Arc::default(),
        };
        let layer = ToolLayer::new(vec![Arc::new(skill)], Workspace::new(std::env::temp_dir()).unwrap(), Duration::from_secs(1));
        let out = layer.run(&call("call_001", "odd", json!({}))).await;
        assert_eq!(
            out.result.error_text().as_deref(),
            Some("odd cannot be called, its schema is broken: tool 0 (odd): parameters.type: unknown type \"Pointer\" (known: string, integer, number, boolean, array, object, null; dict, float, int, bool, str, list, tuple, any)")
        );
    }

    #[test]
    fn schema_is_openai_function_format() {
        let (layer, _) = layer(100);
        let schema = layer.schema();
        assert_eq!(schema.len(), 4);
        assert_eq!(schema[0]["type"], "function");
        assert_eq!(schema[0]["function"]["name"], "slow");
        assert_eq!(schema[0]["function"]["parameters"]["required"], json!(["x"]));
    }
}
