//! Wrench-space data named by a problem file: found relative to the file, checked against a
//! stated hash, loaded. One place for the planner (`loam solve` on a wrench space) and the
//! replays (`loam simulate --terrain FILE` in the MDP simulator).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ApiError;
use crate::problem::planar::PlanarTerrainConfig;

/// The data file a wrench-space problem names, relative to the problem file's folder.
pub(super) fn data_path(file: &Path, data: Option<&String>) -> PathBuf {
    file.parent()
        .unwrap_or(Path::new("."))
        .join(data.cloned().unwrap_or_default())
}

/// The SHA-256 of the data file at `path`, checked against the one the problem states
/// (`terrain.data_sha256`); a file that cannot be read is left to the loader's error.
pub(super) fn data_sha256(
    file: &Path,
    path: &Path,
    stated: Option<&String>,
) -> Result<String, ApiError> {
    let bytes = std::fs::read(path).map_err(|e| {
        ApiError::BadInput(format!(
            "{}: terrain.data: cannot read {}: {e}",
            file.display(),
            path.display()
        ))
    })?;
    let hash = crate::problem::sha256_hex(&bytes);
    match stated {
        Some(stated) if !stated.eq_ignore_ascii_case(&hash) => Err(ApiError::BadInput(format!(
            "{}: terrain.data_sha256: {} hashes to {hash}, not the stated {stated}: the data \
             changed since the problem was written (remove the field to accept the file as it \
             is now)",
            file.display(),
            path.display()
        ))),
        _ => Ok(hash),
    }
}

/// The SHA-256 of the data a wrench-space `terrain` names (relative to `file`), checked
/// against its stated `data_sha256`, without loading the data.
pub(super) fn wrench_data_sha256(
    file: &Path,
    ground: &crate::problem::planar::WrenchSpaceGroundConfig,
) -> Result<String, ApiError> {
    data_sha256(
        file,
        &data_path(file, ground.data.as_ref()),
        ground.data_sha256.as_ref(),
    )
}

/// The wrench space a planar problem file's `terrain` names (its `data`, relative to the
/// file's folder, checked against a stated `data_sha256`); a terrain that is not a wrench
/// space, or data that do not load, is bad input naming the field.
pub fn wrench_space_of(
    file: &Path,
    terrain: &PlanarTerrainConfig,
) -> Result<Arc<crate::terrain::wrench_space::WrenchSpace>, ApiError> {
    use crate::terrain::wrench_space::WrenchSpace;
    let PlanarTerrainConfig::WrenchSpace(ground) = terrain else {
        return Err(ApiError::BadInput(format!(
            "{}: terrain: not a wrench space",
            file.display()
        )));
    };
    wrench_data_sha256(file, ground)?;
    let space = WrenchSpace::load(&data_path(file, ground.data.as_ref()))
        .map_err(|e| ApiError::BadInput(format!("{}: terrain.data: {e}", file.display())))?;
    Ok(Arc::new(space))
}
