//! The reference semantics of every opcode. (Being written.)
