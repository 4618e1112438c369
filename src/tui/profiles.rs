//! What the profile picker knows about each profile's model file, found the way
//! `b4 models list` finds it (without hashing: the picker opens at once).

use crate::brain::{fetch, Backend, ModelConfig, Profile};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelFile {
    /// The mock brain: nothing to load.
    NotNeeded,
    Present,
    /// `fix` says how to get it (`b4 models fetch NAME`, or where to put the file).
    Missing { fix: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileEntry {
    pub name: String,
    pub file: ModelFile,
}

/// Every profile of `config`, in the picker's order, with its model file's state.
pub fn entries(config: &ModelConfig) -> Vec<ProfileEntry> {
    config
        .profile_names()
        .into_iter()
        .map(|name| {
            let file = config.profile(Some(&name)).map_or(ModelFile::NotNeeded, |p| model_file(&p));
            ProfileEntry { name, file }
        })
        .collect()
}

pub fn model_file(profile: &Profile) -> ModelFile {
    if matches!(profile.backend, Backend::Mock | Backend::OpenAi) {
        return ModelFile::NotNeeded;
    }
    let path = fetch::resolve_model_path(profile);
    if path.exists() {
        return ModelFile::Present;
    }
    let fix = match &profile.fetch {
        Some(name) => format!("b4 models fetch {name}"),
        None => format!("put the model at {}", path.display()),
    };
    ModelFile::Missing { fix }
}
