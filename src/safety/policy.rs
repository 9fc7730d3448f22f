//! (policy: being written)
