//! Reading a triangle soup from Wavefront OBJ and STL (ASCII or binary).

use std::path::Path;

use super::{line_of_offset, MeshError};
use crate::sim::dem::sdf::Vec3;

type Soup = (Vec<Vec3>, Vec<[usize; 3]>);

/// Wavefront OBJ: `v x y z [w]` and `f` lines (3 or more corners, fan-triangulated; corners
/// written `i`, `i/t`, `i//n` or `i/t/n`; negative indices count back from the last vertex
/// read). Every other statement (normals, texture coordinates, groups, materials) is
/// ignored: a body needs only its surface.
pub fn parse_obj(text: &str, path: &Path) -> Result<Soup, MeshError> {
    let error = |line: usize, message: String| MeshError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut vertices: Vec<Vec3> = Vec::new();
    // Faces with their line, resolved once every vertex is known (OBJ lets a positive index
    // refer forward).
    let mut faces: Vec<(usize, Vec<i64>)> = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let content = raw.split('#').next().unwrap_or("");
        let mut tokens = content.split_whitespace();
        match tokens.next() {
            Some("v") => {
                let fields: Vec<&str> = tokens.collect();
                if !(3..=4).contains(&fields.len()) {
                    return Err(error(
                        line,
                        format!(
                            "a vertex needs 3 coordinates (`v x y z`, optionally w), got {}",
                            fields.len()
                        ),
                    ));
                }
                let mut v = [0.0; 3];
                for (i, field) in fields[..3].iter().enumerate() {
                    v[i] = field
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| {
                            error(
                                line,
                                format!("vertex coordinate `{field}` is not a finite number"),
                            )
                        })?;
                }
                vertices.push(v);
            }
            Some("f") => {
                let mut corners = Vec::new();
                for field in tokens {
                    let index = field.split('/').next().unwrap_or("");
                    let i: i64 = index.parse().map_err(|_| {
                        error(
                            line,
                            format!(
                                "face corner `{field}` is not a vertex index \
                                 (accepted: i, i/t, i//n, i/t/n with i a non-zero integer)"
                            ),
                        )
                    })?;
                    let resolved = match i {
                        0 => {
                            return Err(error(
                                line,
                                "face corner index 0 (OBJ indices start at 1; negative ones \
                                 count back from the last vertex)"
                                    .into(),
                            ))
                        }
                        i if i < 0 => {
                            let back = vertices.len() as i64 + i;
                            if back < 0 {
                                return Err(error(
                                    line,
                                    format!(
                                        "face corner {i} reaches back past the first vertex \
                                         ({} vertices read so far)",
                                        vertices.len()
                                    ),
                                ));
                            }
                            back
                        }
                        i => i - 1,
                    };
                    corners.push(resolved);
                }
                if corners.len() < 3 {
                    return Err(error(
                        line,
                        format!("a face needs at least 3 corners, got {}", corners.len()),
                    ));
                }
                faces.push((line, corners));
            }
            _ => {}
        }
    }
    let mut triangles = Vec::new();
    for (line, corners) in faces {
        if let Some(&bad) = corners.iter().find(|&&i| i as usize >= vertices.len()) {
            return Err(error(
                line,
                format!(
                    "face refers to vertex {} but the file has {} vertices",
                    bad + 1,
                    vertices.len()
                ),
            ));
        }
        let c: Vec<usize> = corners.into_iter().map(|i| i as usize).collect();
        for k in 1..c.len() - 1 {
            let t = [c[0], c[k], c[k + 1]];
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                return Err(error(
                    line,
                    format!(
                        "face repeats a vertex ({} {} {})",
                        t[0] + 1,
                        t[1] + 1,
                        t[2] + 1
                    ),
                ));
            }
            triangles.push(t);
        }
    }
    Ok((vertices, triangles))
}

/// STL, binary or ASCII. A file whose length is exactly 84 + 50 n bytes, n being the count
/// stored at byte 80, is binary (binary files may also begin with `solid`); otherwise it
/// must be ASCII. Coordinates are single precision in both forms (ASCII values are read as
/// f32), so the two encodings of one mesh give identical triangles.
pub fn parse_stl(bytes: &[u8], path: &Path) -> Result<Soup, MeshError> {
    if bytes.len() >= 84 {
        let count = u32::from_le_bytes(bytes[80..84].try_into().unwrap()) as usize;
        if bytes.len() == 84 + 50 * count {
            return Ok(parse_binary_stl(&bytes[84..], count));
        }
    }
    let starts_solid = bytes
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take(5)
        .eq(b"solid".iter());
    if !starts_solid {
        let message = if bytes.len() >= 84 {
            let count = u32::from_le_bytes(bytes[80..84].try_into().unwrap()) as u64;
            format!(
                "the header says {count} triangles, so the file should be {} bytes, but it is \
                 {} bytes (and it is not ASCII STL, which starts with `solid`)",
                84 + 50 * count,
                bytes.len()
            )
        } else {
            format!(
                "{} bytes is shorter than a binary STL header (84 bytes), and the file does not \
                 start with `solid` as ASCII STL does",
                bytes.len()
            )
        };
        return Err(MeshError::BinaryStl {
            path: path.to_path_buf(),
            message,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| MeshError::Parse {
        path: path.to_path_buf(),
        line: line_of_offset(bytes, e.valid_up_to()),
        message: "ASCII STL is not UTF-8 text".into(),
    })?;
    parse_ascii_stl(text, path)
}

fn parse_binary_stl(records: &[u8], count: usize) -> Soup {
    let mut vertices = Vec::with_capacity(3 * count);
    let mut triangles = Vec::with_capacity(count);
    for record in records.chunks_exact(50) {
        // 12 bytes of normal (ignored: the winding decides), 3 × 12 bytes of corners,
        // 2 bytes of attributes.
        for corner in 0..3 {
            let at = 12 + 12 * corner;
            let f = |k: usize| {
                let start = at + 4 * k;
                f32::from_le_bytes(record[start..start + 4].try_into().unwrap()) as f64
            };
            vertices.push([f(0), f(1), f(2)]);
        }
        let n = vertices.len();
        triangles.push([n - 3, n - 2, n - 1]);
    }
    (vertices, triangles)
}

fn parse_ascii_stl(text: &str, path: &Path) -> Result<Soup, MeshError> {
    let error = |line: usize, message: String| MeshError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    let mut in_loop: Option<usize> = None; // the line `outer loop` was on
    let mut corners = 0;
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let mut tokens = raw.split_whitespace();
        match tokens.next() {
            Some("vertex") => {
                if in_loop.is_none() {
                    return Err(error(line, "`vertex` outside `outer loop`".into()));
                }
                let fields: Vec<&str> = tokens.collect();
                if fields.len() != 3 {
                    return Err(error(
                        line,
                        format!(
                            "`vertex` needs 3 coordinates, got {} (accepted: `vertex x y z`)",
                            fields.len()
                        ),
                    ));
                }
                let mut v = [0.0; 3];
                for (i, field) in fields.iter().enumerate() {
                    v[i] = field
                        .parse::<f32>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| {
                            error(
                                line,
                                format!("vertex coordinate `{field}` is not a finite number"),
                            )
                        })? as f64;
                }
                vertices.push(v);
                corners += 1;
            }
            Some("outer") => {
                in_loop = Some(line);
                corners = 0;
            }
            Some("endloop") => {
                let start = in_loop
                    .take()
                    .ok_or_else(|| error(line, "`endloop` without `outer loop`".into()))?;
                if corners != 3 {
                    return Err(error(
                        start,
                        format!("a facet needs exactly 3 vertices, this loop has {corners}"),
                    ));
                }
                let n = vertices.len();
                triangles.push([n - 3, n - 2, n - 1]);
            }
            Some("solid") | Some("facet") | Some("endfacet") | Some("endsolid") | None => {}
            Some(other) => {
                return Err(error(
                    line,
                    format!(
                        "unexpected `{other}` (accepted: solid, facet normal, outer loop, \
                         vertex, endloop, endfacet, endsolid)"
                    ),
                ))
            }
        }
    }
    if let Some(start) = in_loop {
        return Err(error(
            start,
            "`outer loop` never closed by `endloop`".into(),
        ));
    }
    Ok((vertices, triangles))
}
