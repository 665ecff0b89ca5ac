//! Particle snapshots for ParaView, written by loam itself: legacy VTK POLYDATA and binary
//! PLY. Both store single-precision values (plenty for viewing; checkpoints keep f64) and
//! are written whole or not at all.
//!
//! In ParaView, open the `.vtk` (or `.ply`) series, then apply a Glyph filter with
//! "Sphere" glyphs scaled by `radius` (scale factor 2, since the sphere source has unit
//! diameter) and coloured by `speed`.

use std::path::Path;

use crate::output::{write_atomic, OutputError};

use super::sdf::Vec3;

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(
        "{}: particle arrays differ in length: {positions} positions, {radii} radii, \
         {velocities} velocities (each must have one entry per grain)",
        path.display()
    )]
    LengthMismatch {
        path: std::path::PathBuf,
        positions: usize,
        radii: usize,
        velocities: usize,
    },
    #[error(
        "{}: {count} grains is more than a legacy VTK file can index (at most {})",
        path.display(), i32::MAX / 2
    )]
    TooMany {
        path: std::path::PathBuf,
        count: usize,
    },
    #[error(transparent)]
    Output(#[from] OutputError),
}

fn check_lengths(
    path: &Path,
    positions: &[Vec3],
    radii: &[f64],
    velocities: &[Vec3],
) -> Result<(), SnapshotError> {
    if radii.len() != positions.len() || velocities.len() != positions.len() {
        return Err(SnapshotError::LengthMismatch {
            path: path.to_path_buf(),
            positions: positions.len(),
            radii: radii.len(),
            velocities: velocities.len(),
        });
    }
    Ok(())
}

fn speed(v: Vec3) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Writes a legacy VTK file (version 3.0, BINARY, big-endian as the format requires): the
/// grains as POLYDATA points with one VERTICES cell each, and point data `radius` (m),
/// `velocity` (m/s, vector) and `speed` (m/s).
pub fn write_vtk(
    path: &Path,
    positions: &[Vec3],
    radii: &[f64],
    velocities: &[Vec3],
) -> Result<(), SnapshotError> {
    check_lengths(path, positions, radii, velocities)?;
    let n = positions.len();
    if n > (i32::MAX / 2) as usize {
        return Err(SnapshotError::TooMany {
            path: path.to_path_buf(),
            count: n,
        });
    }
    let mut out = Vec::with_capacity(64 * n + 512);
    let f32s = |out: &mut Vec<u8>, values: &mut dyn Iterator<Item = f64>| {
        for x in values {
            out.extend((x as f32).to_be_bytes());
        }
        out.push(b'\n');
    };
    out.extend(
        format!(
            "# vtk DataFile Version 3.0\nloam DEM particles\nBINARY\nDATASET POLYDATA\n\
             POINTS {n} float\n"
        )
        .as_bytes(),
    );
    f32s(&mut out, &mut positions.iter().flatten().copied());
    out.extend(format!("VERTICES {n} {}\n", 2 * n).as_bytes());
    for i in 0..n as i32 {
        out.extend(1i32.to_be_bytes());
        out.extend(i.to_be_bytes());
    }
    out.push(b'\n');
    out.extend(
        format!("POINT_DATA {n}\nSCALARS radius float 1\nLOOKUP_TABLE default\n").as_bytes(),
    );
    f32s(&mut out, &mut radii.iter().copied());
    out.extend(b"VECTORS velocity float\n");
    f32s(&mut out, &mut velocities.iter().flatten().copied());
    out.extend(b"SCALARS speed float 1\nLOOKUP_TABLE default\n");
    f32s(&mut out, &mut velocities.iter().map(|&v| speed(v)));
    write_atomic(path, &out)?;
    Ok(())
}

/// Writes a binary little-endian PLY file: one `vertex` element per grain with float
/// properties x, y, z (m), radius (m), vx, vy, vz (m/s).
pub fn write_ply(
    path: &Path,
    positions: &[Vec3],
    radii: &[f64],
    velocities: &[Vec3],
) -> Result<(), SnapshotError> {
    check_lengths(path, positions, radii, velocities)?;
    let n = positions.len();
    let mut out = Vec::with_capacity(28 * n + 256);
    out.extend(
        format!(
            "ply\nformat binary_little_endian 1.0\ncomment loam DEM particles\n\
             element vertex {n}\nproperty float x\nproperty float y\nproperty float z\n\
             property float radius\nproperty float vx\nproperty float vy\n\
             property float vz\nend_header\n"
        )
        .as_bytes(),
    );
    for ((p, &r), v) in positions.iter().zip(radii).zip(velocities) {
        for x in [p[0], p[1], p[2], r, v[0], v[1], v[2]] {
            out.extend((x as f32).to_le_bytes());
        }
    }
    write_atomic(path, &out)?;
    Ok(())
}
