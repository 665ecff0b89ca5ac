//! The data-driven wrench-space terrain (docs/WRENCH_SPACE.md). To be written.
