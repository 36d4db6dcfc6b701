//! Graphviz output of a function's CFG. (Being written.)
