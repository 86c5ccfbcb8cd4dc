//! `[sweep]` and `run --sweep KEY=V1,V2,...`: one key of `[objects]` (the object count,
//! or a shape knob) run at several values. Every point runs every variant and phase, as a
//! plain run at that value would; the report fits what each variant keeps against the
//! swept key (`report::fit`).

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
    /// `label=value`, the name a point's variants carry: `count=5000`.
    pub fn point_label(&self, value: u64) -> String {
        format!("{}={value}", self.key)
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
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| Problem::key(&at, format!("{v:?} is not a whole number")))
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
            .map(|&value| Scenario {
                objects: sweep.key.apply(&self.objects, value),
                sweep: None,
                ..self.clone()
            })
            .collect()
    }
}
