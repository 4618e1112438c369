//! The workspace root every file access is confined to.

use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct Workspace {
    pub root: PathBuf,
}
