//! The models a problem file's sections describe, built from them: the added-mass bed of a
//! medium, and the wrench-space terrain read from its data file (a YAML file read, like a problem file,
//! with errors placed at their line).
//!
//! The model types live below the schema (`model`, `terrain`) and know nothing of it; these
//! constructors are theirs, declared here on the schema's side.

use std::path::Path;

use super::field_path::FieldPath;
use super::locate::locate;
use super::{load_yaml, Medium};
use crate::terrain::wrench_space::{WrenchSpace, WrenchSpaceData, WrenchSpaceError};
use crate::terrain::AddedMass;

impl AddedMass {
    /// The model of `medium` under a flat foot of radius `foot_radius`.
    pub fn from_medium(medium: &Medium, foot_radius: f64) -> AddedMass {
        AddedMass {
            foot_radius,
            recruitment_rate: medium.recruitment_rate,
            shear_band_angle: medium.shear_band_angle(),
            surrounding_mass_scaling: medium.surrounding_mass_scaling,
            volume_fraction: medium.volume_fraction,
            grain_density: medium.grain_density,
            penetration_stiffness: medium.penetration_stiffness,
            resistive_stress: medium.resistive_stress,
            drag_scaling: medium.drag_scaling,
        }
    }
}

impl WrenchSpace {
    /// Reads, validates and fits a data file.
    pub fn load(path: &Path) -> Result<WrenchSpace, WrenchSpaceError> {
        let data = WrenchSpaceData::load(path)?;
        WrenchSpace::from_data(data).map_err(|e| e.in_file(path))
    }
}

impl WrenchSpaceData {
    /// Reads and validates a data file.
    pub fn load(path: &Path) -> Result<WrenchSpaceData, WrenchSpaceError> {
        let text = std::fs::read_to_string(path).map_err(|source| WrenchSpaceError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let data: WrenchSpaceData = load_yaml(&text).map_err(|e| WrenchSpaceError::Invalid {
            file: Some(path.to_path_buf()),
            line: e.line,
            column: e.column,
            field: e.field,
            message: e.message,
        })?;
        data.validate()
            .map_err(|e| e.in_file(path).located_in(&text))?;
        Ok(data)
    }
}

impl WrenchSpaceError {
    /// The same error with the line and column where `text` (the file's) writes its field,
    /// or the nearest enclosing field it writes (`nodes[3]` for `nodes[3].wrenches[5]` in a
    /// flow list); unchanged when the error has a line already or no field is found.
    pub(crate) fn located_in(self, text: &str) -> Self {
        let WrenchSpaceError::Invalid {
            file,
            line: None,
            column: None,
            field: Some(field),
            message,
        } = self
        else {
            return self;
        };
        let found = FieldPath::parse(&field).and_then(|path| {
            (1..=path.0.len())
                .rev()
                .find_map(|n| locate(text, &FieldPath(path.0[..n].to_vec())))
        });
        WrenchSpaceError::Invalid {
            file,
            line: found.map(|l| l.line),
            column: found.map(|l| l.column),
            field: Some(field),
            message,
        }
    }
}
