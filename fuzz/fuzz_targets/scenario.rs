//! The scenario parser on any bytes: it must accept or refuse, never panic, and a refusal
//! must be one error naming the file, in the file's words.
#![no_main]

use std::path::Path;

use scenario::{Scenario, ScenarioError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Scenario::parse(Path::new("fuzz.toml"), text) {
        Ok(scenario) => {
            // What validation lets through, the runner and the report take as it is.
            assert!(!scenario.variants.is_empty() && !scenario.phases.is_empty());
        }
        Err(ScenarioError::Invalid(invalid)) => {
            let message = invalid.to_string();
            assert!(message.starts_with("failed to load `fuzz.toml`"), "{message}");
            // Rust's names for the parser's types, unless the file itself wrote them (a
            // refused value is quoted back).
            for internal in ["struct Raw", "enum Raw", "$__"] {
                assert!(!message.contains(internal) || text.contains(internal), "{message}");
            }
        }
        Err(e @ ScenarioError::Read { .. }) => panic!("parse read a file: {e}"),
    }
});
