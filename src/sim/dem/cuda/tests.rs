//! The kernel structs and constants of the Rust side against the CUDA source.

use super::compile::{kernel_program, KERNEL_NAMES, KERNEL_SOURCES};
use super::layout::{
    Params, BODY_BLOCKS, BODY_FIELDS, BODY_FIELD_COUNT, BODY_SUMS, EXTERNAL_SLOTS, GATHER_THREADS,
    GRAIN_FIELDS, GRAIN_FIELD_COUNT, PAIR_SLOTS, REVERSE_SLOTS,
};
use super::HERTZ_KERNEL_NAMES;

/// Field names of `struct NAME { ... };` in the CUDA source, in order.
fn struct_fields(source: &str, name: &str) -> Vec<String> {
    let start = source
        .find(&format!("struct {name} {{"))
        .unwrap_or_else(|| panic!("struct {name} in common.cuh"));
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("};").unwrap()];
    let mut names = Vec::new();
    for line in body.lines() {
        let code = line.split("//").next().unwrap().trim();
        if code.is_empty() {
            continue;
        }
        let decl = code.trim_end_matches(';');
        // "real *x, *y, *z" or "i64 grains_per_scene" or "real gravity_x, gravity_y"
        let after_type = decl.split_once(' ').unwrap().1;
        for part in after_type.split(',') {
            names.push(part.trim().trim_start_matches('*').trim().to_string());
        }
    }
    names
}

#[test]
fn kernel_structs_match_the_cuda_source() {
    let source = KERNEL_SOURCES[0].1;
    let grains: Vec<&str> = GRAIN_FIELDS.iter().map(|f| f.0).collect();
    assert_eq!(struct_fields(source, "Grains"), grains);
    assert_eq!(grains.len(), GRAIN_FIELD_COUNT);
    let bodies: Vec<&str> = BODY_FIELDS.iter().map(|f| f.0).collect();
    assert_eq!(struct_fields(source, "Bodies"), bodies);
    assert_eq!(bodies.len(), BODY_FIELD_COUNT);
    let params = struct_fields(source, "Params");
    assert_eq!(params.len() * 8, std::mem::size_of::<Params>());
    let debug = format!("{:?}", Params::default());
    let mut at = 0;
    for name in &params {
        let found = debug[at..]
            .find(&format!("{name}:"))
            .unwrap_or_else(|| panic!("Params field {name} in order"));
        at += found;
    }
    for (name, value) in [
        ("PAIR_SLOTS", PAIR_SLOTS),
        ("REVERSE_SLOTS", REVERSE_SLOTS),
        ("EXTERNAL_SLOTS", EXTERNAL_SLOTS),
        ("GATHER_THREADS", GATHER_THREADS as usize),
        ("BODY_BLOCKS", BODY_BLOCKS as usize),
        ("BODY_SUMS", BODY_SUMS),
    ] {
        assert!(
            source.contains(&format!("#define {name} {value}\n")),
            "#define {name} {value} in common.cuh"
        );
    }
    for name in KERNEL_NAMES.iter().chain(&HERTZ_KERNEL_NAMES) {
        assert!(
            kernel_program().contains(&format!("__global__ void {name}(")),
            "kernel {name} is defined"
        );
    }
}

#[test]
fn hertz_kernel_structs_match_the_cuda_source() {
    use crate::sim::dem::cuda_hertz::*;
    let source = KERNEL_SOURCES
        .iter()
        .find(|(name, _)| *name == "hertz.cu")
        .expect("hertz.cu is in the program")
        .1;
    for (name, table, count) in [
        ("HmGrains", HM_GRAIN_FIELDS, HM_GRAIN_FIELD_COUNT),
        ("HmBodies", HM_BODY_FIELDS, HM_BODY_FIELD_COUNT),
        ("BodyContacts", HM_CONTACT_FIELDS, HM_CONTACT_FIELD_COUNT),
        ("PairList", HM_PAIR_FIELDS, HM_PAIR_FIELD_COUNT),
    ] {
        let fields: Vec<&str> = table.iter().map(|f| f.0).collect();
        assert_eq!(struct_fields(source, name), fields, "struct {name}");
        assert_eq!(fields.len(), count, "{name}: field count");
    }
    let params = struct_fields(source, "HmParams");
    assert_eq!(params.len() * 8, std::mem::size_of::<HmParams>());
    let debug = format!("{:?}", HmParams::default());
    let mut at = 0;
    for name in &params {
        at += debug[at..]
            .find(&format!("{name}:"))
            .unwrap_or_else(|| panic!("HmParams field {name} in order"));
    }
    let program = kernel_program();
    for (name, value) in hertz_defines() {
        assert!(
            program.contains(&format!("#define {name} {value}\n")),
            "#define {name} {value} in the kernels"
        );
    }
}
