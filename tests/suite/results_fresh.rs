//! The committed results against the code: tests arrive with the regeneration check.
