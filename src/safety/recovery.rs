//! (recovery: being written)
