//! B2, the skills: real tools the agent can call. A skill is one file (schema via its
//! manifest in `skills/`, handler, parallel-safety flag, tests).

pub mod workspace;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::Args;
pub use workspace::Workspace;

/// A skill's manifest, `skills/NAME.json`: what the model is told about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments (`type: object`, `properties`, `required`).
    pub parameters: Value,
}

/// A tool failure: data for the model, not a crash.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct SkillError(pub String);

impl SkillError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

pub trait Skill: Send + Sync {
    fn manifest(&self) -> &Manifest;

    /// Whether calls may run at the same time as other calls.
    fn parallel_safe(&self) -> bool {
        true
    }

    /// Runs one call with already-validated arguments. The output object always has a
    /// `content` string a person (or the mock brain) can read.
    fn run(&self, args: &Args, workspace: &Workspace) -> Result<Value, SkillError>;
}

/// Every skill the agent has, in the order the tools schema lists them.
pub fn all() -> Vec<std::sync::Arc<dyn Skill>> {
    Vec::new()
}
