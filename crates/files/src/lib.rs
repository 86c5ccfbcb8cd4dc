//! What informer-mem reads and writes: [`input`] reads what the commands are given with a
//! size limit, [`output`] makes every write (files, standard output) and prints the
//! messages on standard error ([`say!`]).

pub mod input;
pub mod output;
