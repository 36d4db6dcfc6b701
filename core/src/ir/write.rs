//! The IR text printer. (Being written.)
