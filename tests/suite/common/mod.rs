//! Helpers shared by the test modules.
#![allow(dead_code)]

pub mod compare;
pub mod csv;
pub mod fd;
pub mod pile;
pub mod pvd;
pub mod run;
pub mod scenes;
pub mod temp_dir;
