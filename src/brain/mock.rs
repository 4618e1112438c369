//! The deterministic mock brain (seed-compatible).
