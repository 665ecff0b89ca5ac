//! The files made of a discrete-element bed (`sim::dem`): its checkpoint, snapshots of the
//! grains and the bodies for ParaView ([`snapshot`]) and side-view renders ([`render`]).

use std::path::Path;

use super::{write_atomic, OutputError};
use crate::sim::dem::bed::Checkpoint;

pub mod render;
pub mod snapshot;

impl Checkpoint {
    /// Writes the checkpoint atomically.
    pub fn save(&self, path: &Path) -> Result<(), OutputError> {
        write_atomic(path, &self.to_bytes())
    }
}
