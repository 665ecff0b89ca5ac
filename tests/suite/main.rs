//! loam's integration tests, one binary (linking one test binary instead of one per file
//! saves minutes on a two-core machine). Run one module with
//! `cargo test --release --test suite -- <module>::`, e.g. `-- hopper_file::`.

mod common;

mod accuracy;
mod analytic_optima;
mod bench_peer;
mod cli;
mod contact_models;
mod dem_bulk;
mod dem_cli;
mod dem_coupling;
mod dem_cuda;
mod dem_cuda_realisations;
mod dem_geometry;
mod dem_hertz;
mod dem_output;
mod dem_physics;
mod dem_planar;
mod dem_scenes;
mod derivatives;
mod exit_codes;
mod gaits;
mod hopper_file;
mod hopper_hops;
mod hopper_jumps;
mod hull;
mod linear_solver;
mod material_calibrate;
mod mdp;
mod mdp_replay;
mod mdp_scenarios;
mod mesh_refinement;
mod multibody;
mod planar_plans;
mod planar_replay_physics;
mod plot;
mod plot_planar;
mod replay;
mod results_fresh;
mod robot_files;
mod run_folders;
mod schema;
mod sweep_shards;
mod transcription_error;
mod two_stage;
mod urdf;
mod validate;
mod warm_start;
mod workflow_guards;
mod wrench_extrapolation;
mod wrench_hop;
mod wrench_rail;
mod wrench_space;
mod wrench_space_dem;
