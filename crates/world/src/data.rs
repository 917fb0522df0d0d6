//! Training-data generation for the demo world model.
