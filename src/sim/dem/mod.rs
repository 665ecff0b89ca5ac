//! The discrete-element bed (MODEL.md section 4; GranularGym thesis, chapter 6): rigid
//! frictional spheres, spatial-hash contacts, projected Jacobi on the contact NCP, and bodies
//! that touch the grains through signed distance fields.

pub mod cuda;
pub mod sdf;
