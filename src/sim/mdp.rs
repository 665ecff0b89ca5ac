//! The maximum-dissipation (MDP) simulator on wrench-space terrain (docs/WRENCH_SPACE.md
//! section 3.5). To be written.
