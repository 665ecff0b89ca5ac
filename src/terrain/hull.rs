//! A small 3-D convex hull (the wrench space's half-space form). To be written.
