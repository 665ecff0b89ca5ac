//! Robot models. Each declares its domains and writes its dynamics once, generic over the
//! scalar.

pub mod multibody;
pub mod planar;
