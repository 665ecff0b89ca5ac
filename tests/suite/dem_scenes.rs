//! General DEM scenes (`loam dem run`): tests arrive with the scene runner.
