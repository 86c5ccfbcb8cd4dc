//! `[sweep]` and `run --sweep KEY=V1,V2,...`: one key of `[objects]` (the object count,
//! or a shape knob), or a Go runtime setting of the external variants' programs
//! (`env.GOGC`, `env.GOMEMLIMIT`), run at several values. Every point runs every variant
//! and phase, as a plain run at that value would; the report fits what each variant keeps
//! against the swept key (`report::fit`).

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::Scenario;
use super::error::Problem;
use super::objects::{ObjectSpec, SweepKey};
use super::storable::unstorable;

/// Most points one sweep may have.
pub const MAX_POINTS: usize = 32;

/// One key of `[objects]` and the values to run it at, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sweep {
    /// The key.
    pub key: SweepKey,
    /// Its values, one point each.
    pub values: Vec<u64>,
}

impl Sweep {
    /// `label=value`, the name a point's variants carry: `count=5000`,
    /// `env.GOMEMLIMIT=512MiB`.
    pub fn point_label(&self, value: u64) -> String {
        format!("{}={}", self.key, self.value_text(value))
    }

    /// `value` as the key takes it: a memory limit in Go's units where it is a whole
    /// number of them.
    pub fn value_text(&self, value: u64) -> String {
        if self.key != SweepKey::GoMemLimit {
            return value.to_string();
        }
        let units = [
            ("TiB", 1u64 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ];
        units
            .iter()
            .find(|(_, size)| value.is_multiple_of(*size))
            .map_or_else(
                || format!("{value}B"),
                |(unit, size)| format!("{}{unit}", value / size),
            )
    }
}

/// `run --sweep KEY=V1,V2,...` as typed: checked against the scenario when it is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepArg {
    key: String,
    values: Vec<String>,
}

impl FromStr for SweepArg {
    type Err = String;

    fn from_str(s: &str) -> Result<SweepArg, String> {
        let (key, values) = s.split_once('=').ok_or_else(|| {
            format!("{s:?}: expected KEY=V1,V2,... (for example count=1000,2000)")
        })?;
        Ok(SweepArg {
            key: key.trim().to_owned(),
            values: values.split(',').map(|v| v.trim().to_owned()).collect(),
        })
    }
}

/// The scenario's `[sweep]` table (`raw`), or the command line's (`arg`, which replaces
/// it), checked against the scenario's objects.
pub(super) fn sweep_from(
    raw: Option<&std::collections::BTreeMap<String, Spanned<Vec<Spanned<i64>>>>>,
    arg: Option<&SweepArg>,
    objects: &ObjectSpec,
) -> Result<Option<Sweep>, Problem> {
    if let Some(arg) = arg {
        let at = format!("--sweep {}", arg.key);
        let key: SweepKey = arg.key.parse().map_err(|e| Problem::key(&at, e))?;
        let values = arg
            .values
            .iter()
            .map(|v| match key {
                SweepKey::GoMemLimit => go_memory_limit(v).ok_or_else(|| {
                    Problem::key(&at, format!("{v:?} is not a memory limit"))
                        .hint("as GOMEMLIMIT takes one: bytes, or with B, KiB, MiB, GiB or TiB")
                }),
                _ => v
                    .parse::<i64>()
                    .map_err(|_| Problem::key(&at, format!("{v:?} is not a whole number"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        return checked(key, &values, objects, |message| Problem::key(&at, message)).map(Some);
    }
    let Some(raw) = raw else {
        return Ok(None);
    };
    let mut keys = raw.iter();
    let Some((name, values)) = keys.next() else {
        return Err(Problem::key("sweep", "`[sweep]` names no key")
            .hint("for example `count = [1000, 2000, 5000, 10000]`"));
    };
    if let Some((second, _)) = keys.next() {
        return Err(Problem::key(
            format!("sweep.{second}"),
            format!("a sweep varies one key; this one already varies `{name}`"),
        ));
    }
    let at = format!("sweep.{name}");
    let key: SweepKey = name
        .parse()
        .map_err(|e| Problem::at(&at, values.span(), e))?;
    let plain: Vec<i64> = values.as_ref().iter().map(|v| *v.as_ref()).collect();
    checked(key, &plain, objects, |message| {
        Problem::at(&at, values.span(), message)
    })
    .map(Some)
}

/// A memory limit as Go's runtime reads GOMEMLIMIT: a whole number of bytes, or of B,
/// KiB, MiB, GiB or TiB.
fn go_memory_limit(text: &str) -> Option<i64> {
    let units = [
        ("TiB", 1i64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    let (number, scale) = units
        .iter()
        .find_map(|(unit, size)| Some((text.strip_suffix(unit)?, *size)))
        .unwrap_or((text.strip_suffix('B').unwrap_or(text), 1));
    number.parse::<i64>().ok()?.checked_mul(scale)
}

fn checked(
    key: SweepKey,
    values: &[i64],
    objects: &ObjectSpec,
    problem: impl Fn(String) -> Problem,
) -> Result<Sweep, Problem> {
    if let Some(why) = key.misfit(objects) {
        return Err(problem(why.to_owned()));
    }
    if values.is_empty() || values.len() > MAX_POINTS {
        return Err(problem(format!(
            "{} values: a sweep takes 1 to {MAX_POINTS}",
            values.len()
        )));
    }
    let (min, max) = key.limits();
    let mut checked = Vec::with_capacity(values.len());
    for &value in values {
        match u64::try_from(value) {
            Ok(v) if (min..=max).contains(&v) && !checked.contains(&v) => {
                if let Some(refused) = unstorable(key.apply(objects, v).shape()) {
                    let message = format!("{key} = {value}: {}", refused.message);
                    return Err(problem(message).hint(refused.hint));
                }
                checked.push(v);
            }
            Ok(v) if checked.contains(&v) => {
                return Err(problem(format!("{value} is given twice")));
            }
            _ => {
                return Err(problem(format!(
                    "{value} is out of range: expected {min} to {max}"
                )));
            }
        }
    }
    Ok(Sweep {
        key,
        values: checked,
    })
}

impl Scenario {
    /// The plain scenarios a run runs: one per point of the sweep, each with the swept
    /// key set and no sweep; or this scenario alone.
    pub fn points(&self) -> Vec<Scenario> {
        let Some(sweep) = &self.sweep else {
            return vec![self.clone()];
        };
        sweep
            .values
            .iter()
            .map(|&value| {
                let mut point = Scenario {
                    objects: sweep.key.apply(&self.objects, value),
                    sweep: None,
                    ..self.clone()
                };
                if let Some(name) = sweep.key.env() {
                    let subjects = point.variants.iter_mut().filter_map(|v| v.subject.as_mut());
                    for subject in subjects {
                        subject.env.insert(name.to_owned(), sweep.value_text(value));
                    }
                }
                point
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn scenario(external: bool, sweep: &str) -> Result<Scenario, String> {
        let program = match external {
            true => "implementation = \"external\"\ncommand = [\"my-controller\"]\n",
            false => "",
        };
        let text = format!(
            "name = \"gc\"\n[objects]\nkind = \"Pod\"\ncount = 10\n[[variant]]\nname = \"model\"\n\
             [[variant]]\nname = \"program\"\n{program}[[phase]]\nkind = \"list\"\n"
        );
        let arg: SweepArg = sweep.parse()?;
        Scenario::parse_with(Path::new("gc.toml"), &text, Some(&arg)).map_err(|e| e.to_string())
    }

    #[test]
    fn a_sweep_of_a_go_setting_sets_it_in_each_programs_environment() {
        let swept = scenario(true, "env.GOGC=50,100,200").unwrap();
        let points = swept.points();
        let gogc: Vec<_> = points
            .iter()
            .map(|p| p.variants[1].subject.as_ref().unwrap().env["GOGC"].clone())
            .collect();
        assert_eq!(gogc, ["50", "100", "200"]);
        // The model has no environment; the objects are the same at every point.
        assert!(points.iter().all(|p| p.variants[0].subject.is_none()));
        assert!(points.iter().all(|p| p.objects == swept.objects));

        let limited = scenario(true, "env.gomemlimit=512MiB,1GiB,1536MiB").unwrap();
        let sweep = limited.sweep.as_ref().unwrap();
        assert_eq!(sweep.values, [512 << 20, 1 << 30, 1536 << 20]);
        let labels: Vec<_> = sweep.values.iter().map(|&v| sweep.point_label(v)).collect();
        assert_eq!(
            labels,
            [
                "env.GOMEMLIMIT=512MiB",
                "env.GOMEMLIMIT=1GiB",
                "env.GOMEMLIMIT=1536MiB"
            ]
        );
        let points = limited.points();
        let env = &points[1].variants[1].subject.as_ref().unwrap().env;
        assert_eq!(env["GOMEMLIMIT"], "1GiB");
    }

    #[test]
    fn a_sweep_of_a_go_setting_needs_a_program_and_values_go_takes() {
        let none = scenario(false, "env.GOGC=50,100").unwrap_err();
        assert!(
            none.contains("--sweep env.GOGC") && none.contains("this scenario has none"),
            "{none}"
        );
        let bad = scenario(true, "env.GOMEMLIMIT=512MB").unwrap_err();
        assert!(bad.contains("\"512MB\" is not a memory limit"), "{bad}");
        let small = scenario(true, "env.GOMEMLIMIT=1KiB").unwrap_err();
        assert!(small.contains("out of range"), "{small}");
        let zero = scenario(true, "env.GOGC=0").unwrap_err();
        assert!(zero.contains("out of range"), "{zero}");
    }
}
