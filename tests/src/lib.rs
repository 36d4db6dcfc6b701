//! Integration tests of pinv live in tests/.
