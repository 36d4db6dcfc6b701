//! pinv-primitives: the overlay method table. (Being written.)
