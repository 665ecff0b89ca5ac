//! The two-stage solve: tests arrive with the strategy.
