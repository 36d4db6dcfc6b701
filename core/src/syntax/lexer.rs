//! The lexer. (Being written.)
