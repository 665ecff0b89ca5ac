//! Which plan a result file belongs to (README, "Run folders").
//!
//! A plan's identity, `plan_id`, is a content hash of what defines the plan: the resolved
//! problem, as canonical JSON (object keys sorted, no white space), and the bytes of
//! `trajectory.csv`. `solution.json` records it. Every file made from a plan records it too:
//! a replay's or a DEM replay's JSON has `plan_id`, and `csv_sha256`, the hash of the CSV it
//! describes. Readers recompute both and refuse files that do not belong together, so a
//! truncated trajectory, another plan's `solution.json` or a replay left from an earlier solve
//! is an error, never a figure with the wrong label.
//!
//! Hashes are the first [`ID_DIGITS`] hex digits (64 bits) of a SHA-256: short enough to name
//! a folder (`archive/<plan_id>/`), far too long to collide by accident.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{write_files_atomic, OutputError};

/// Hex digits kept of a SHA-256.
pub const ID_DIGITS: usize = 16;

/// The identity of a plan: its resolved problem (as `solution.json` holds it) and the bytes of
/// its `trajectory.csv`.
pub fn plan_id(problem: &Value, trajectory: &[u8]) -> String {
    let problem = canonical_json(problem);
    let mut hash = Sha256::new();
    // Framed (a tag, then the problem's length) so that no other split of the same bytes
    // between problem and trajectory gives the same identity.
    hash.update(b"loam plan 1\n");
    hash.update((problem.len() as u64).to_le_bytes());
    hash.update(problem.as_bytes());
    hash.update(trajectory);
    short_hex(&hash.finalize())
}

/// The identity of a serializable problem, as a reader of `solution.json` will compute it:
/// through JSON text, so that numbers are the ones written.
pub fn plan_id_of<P: Serialize>(problem: &P, trajectory: &[u8]) -> String {
    let text = serde_json::to_string(problem).expect("the problem serializes");
    let value: Value = serde_json::from_str(&text).expect("JSON written by serde_json parses");
    plan_id(&value, trajectory)
}

/// The short SHA-256 of a file's bytes (`csv_sha256`).
pub fn content_hash(bytes: &[u8]) -> String {
    short_hex(&Sha256::digest(bytes))
}

fn short_hex(digest: &[u8]) -> String {
    digest
        .iter()
        .take(ID_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// JSON with object keys in sorted order and no white space: one text per value.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// 8 hex digits of the SHA-256 of `value`'s canonical JSON: the tag of a set of parameters in
/// a file name (`replay-on-<name>-<hash>`).
pub fn short_hash(value: &Value) -> String {
    content_hash(canonical_json(value).as_bytes())[..8].to_string()
}

/// Why files do not belong together.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("could not read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not JSON: {message}", path.display())]
    Json { path: PathBuf, message: String },
    #[error(
        "{}: no `{key}`, so nothing ties it to {what}: it was written by a loam from before \
         run identities, or not by loam; make it again (`loam solve`, then `loam simulate`)",
        path.display()
    )]
    NoId {
        path: PathBuf,
        key: &'static str,
        what: String,
    },
    #[error(
        "{} and {} do not belong together: solution.json records plan_id {recorded}, but its \
         problem and this trajectory.csv hash to {computed} (trajectory.csv truncated or \
         edited, or one of the two from another plan); solve again, or put a plan's own files \
         together",
        trajectory.display(),
        solution.display()
    )]
    PlanMismatch {
        solution: PathBuf,
        trajectory: PathBuf,
        recorded: String,
        computed: String,
    },
    #[error(
        "{} was made from plan {recorded}, but {} holds plan {plan}: it belongs to another plan \
         (left from an earlier solve?); make it again from this plan or remove it",
        file.display(),
        solution.display()
    )]
    OtherPlan {
        file: PathBuf,
        recorded: String,
        solution: PathBuf,
        plan: String,
    },
    #[error(
        "{} does not match {}: it hashes to {computed}, but {} records csv_sha256 {recorded} \
         (truncated or edited, or from another run); make both again",
        csv.display(),
        json.display(),
        json.display()
    )]
    CsvMismatch {
        csv: PathBuf,
        json: PathBuf,
        recorded: String,
        computed: String,
    },
    #[error(
        "{} has no {} beside it to say which plan it was made from; make it again (`loam \
         simulate`) or remove it",
        csv.display(),
        json.display()
    )]
    NoRecord { csv: PathBuf, json: PathBuf },
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, IdentityError> {
    fs::read(path).map_err(|source| IdentityError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn read_json(path: &Path) -> Result<Value, IdentityError> {
    let bytes = read_bytes(path)?;
    serde_json::from_slice(&bytes).map_err(|e| IdentityError::Json {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn recorded_id(
    json: &Value,
    key: &'static str,
    path: &Path,
    what: &str,
) -> Result<String, IdentityError> {
    json.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| IdentityError::NoId {
            path: path.to_path_buf(),
            key,
            what: what.to_string(),
        })
}

/// The `plan_id` that `solution.json` in `dir` records, unchecked; None where there is no
/// readable one.
pub fn recorded_plan_id(dir: &Path) -> Option<String> {
    let json = read_json(&dir.join("solution.json")).ok()?;
    json.get("plan_id")?.as_str().map(str::to_string)
}

/// Checks that `solution` (parsed, read from `solution_path`) and the bytes of its
/// `trajectory.csv` are one plan; returns its identity.
pub fn verify_plan_files(
    solution_path: &Path,
    solution: &Value,
    trajectory_path: &Path,
    trajectory: &[u8],
) -> Result<String, IdentityError> {
    let recorded = recorded_id(solution, "plan_id", solution_path, "its trajectory.csv")?;
    let computed = plan_id(solution.get("problem").unwrap_or(&Value::Null), trajectory);
    if recorded != computed {
        return Err(IdentityError::PlanMismatch {
            solution: solution_path.to_path_buf(),
            trajectory: trajectory_path.to_path_buf(),
            recorded,
            computed,
        });
    }
    Ok(computed)
}

/// Checks the plan in `dir` (`solution.json` and `trajectory.csv`); returns its identity.
pub fn verify_plan(dir: &Path) -> Result<String, IdentityError> {
    let solution_path = dir.join("solution.json");
    let trajectory_path = dir.join("trajectory.csv");
    let solution = read_json(&solution_path)?;
    let trajectory = read_bytes(&trajectory_path)?;
    verify_plan_files(&solution_path, &solution, &trajectory_path, &trajectory)
}

/// The plan a derived file must belong to: its identity and the `solution.json` that holds it.
#[derive(Clone, Copy, Debug)]
pub struct PlanRef<'a> {
    pub plan_id: &'a str,
    pub solution: &'a Path,
}

/// Checks a file made from a plan: the JSON record `json` must exist and, where `plan` is
/// given, record its `plan_id`; where `csv` is given, the CSV must hash to the record's
/// `csv_sha256`.
pub fn verify_derived(
    json: &Path,
    csv: Option<&Path>,
    plan: Option<PlanRef>,
) -> Result<(), IdentityError> {
    if !json.is_file() {
        if let Some(csv) = csv {
            return Err(IdentityError::NoRecord {
                csv: csv.to_path_buf(),
                json: json.to_path_buf(),
            });
        }
    }
    let record = read_json(json)?;
    if let Some(plan) = plan {
        let recorded = recorded_id(&record, "plan_id", json, "the plan in this folder")?;
        if recorded != plan.plan_id {
            return Err(IdentityError::OtherPlan {
                file: csv.unwrap_or(json).to_path_buf(),
                recorded,
                solution: plan.solution.to_path_buf(),
                plan: plan.plan_id.to_string(),
            });
        }
    }
    if let Some(csv) = csv {
        let recorded = recorded_id(&record, "csv_sha256", json, &csv.display().to_string())?;
        let computed = content_hash(&read_bytes(csv)?);
        if recorded != computed {
            return Err(IdentityError::CsvMismatch {
                csv: csv.to_path_buf(),
                json: json.to_path_buf(),
                recorded,
                computed,
            });
        }
    }
    Ok(())
}

/// A derived JSON record: the plan it was made from, the hash of the CSV beside it, then its
/// own keys.
#[derive(Serialize)]
struct Record<'a, T: Serialize> {
    plan_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    csv_sha256: Option<String>,
    #[serde(flatten)]
    body: &'a T,
}

/// Writes a file made from plan `plan_id`: the CSV `csv` (path and bytes), if any, and the
/// JSON record `json` holding `plan_id`, the CSV's hash and the keys of `body`. Both are
/// written to temporaries first and renamed together, the JSON last.
pub fn write_derived<T: Serialize>(
    plan_id: &str,
    csv: Option<(&Path, &[u8])>,
    json: &Path,
    body: &T,
) -> Result<(), OutputError> {
    let record = Record {
        plan_id,
        csv_sha256: csv.map(|(_, bytes)| content_hash(bytes)),
        body,
    };
    let text = serde_json::to_string_pretty(&record).expect("the record serializes");
    let mut files: Vec<(&Path, &[u8])> = csv.into_iter().collect();
    files.push((json, text.as_bytes()));
    write_files_atomic(&files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_fips_180_2_example() {
        // FIPS 180-2, appendix B.1: SHA-256("abc") = ba7816bf 8f01cfea ...
        assert_eq!(content_hash(b"abc"), "ba7816bf8f01cfea");
    }

    #[test]
    fn canonical_json_sorts_keys_and_ignores_layout() {
        let a: Value =
            serde_json::from_str(r#"{"b": [1, 2.5, {"y": 1, "x": null}], "a": "t"}"#).unwrap();
        let b: Value =
            serde_json::from_str("{\n  \"a\":\"t\",\"b\":[1,2.5,{\"x\":null,\"y\":1}]}").unwrap();
        assert_eq!(
            canonical_json(&a),
            r#"{"a":"t","b":[1,2.5,{"x":null,"y":1}]}"#
        );
        assert_eq!(plan_id(&a, b"t\n"), plan_id(&b, b"t\n"));
        assert_ne!(plan_id(&a, b"t\n"), plan_id(&a, b"t\n\n"));
    }
}
